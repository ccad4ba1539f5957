// A whole partial-allocation auction (the PF solve plus one solve per winner) with every solver on the
// same seeded instances, in one run: per solver and size the wall-clock and CPU p50/p95/max, how many
// auctions were proven optimal (every one of the N+1 solves), the worst optimality gap, the speed
// ratio against CBC, and how often two solvers that both proved their optimum disagree on W* or a c_i.
//
// Instances: bids from the bidder library (bidder/bid_generator.h, 32 rows at most, non-improving rows
// dropped) on clusters of 8-GPU machines (4 slots × 2 GPUs, 4 machines per rack). The cluster has twice
// the offered GPUs and the offer is a random half of its slots (a fragmented, busy cluster); a bidder
// may hold GPUs of the busy half; every bidder bids on the same offer, so bidders compete for the same
// best bundles. Each bidder has a demand in {1, 2, 4, 8, 16, 32} and ρ = (elapsed + work·S(locality)/
// GPUs) / T_id with S = 1.0 / 1.1 / 1.3 for one machine / one rack / cross rack.
//
//   auction_bench [--budget SECONDS (0: none)] [--instances N] [--first K] [--sizes 20x64,50x256,200x1024] [--slot-gpus 2|4|8] [--apps elastic|gangs]
//                 [--solvers bnb,cbc,shape,cbc-shape,bnb-lagrangian,dfs+cbc,dfs200000+cbc] [--threads N] [--symmetry] [--dump DIR]
//                 [--restart-pf]
//   auction_bench --recorded LOG[,LOG...] [--min-bidders N] [--instances N] [--budget SECONDS] [--solvers ...]
//
// --recorded: instead of generated instances, the auctions of themis-sim's `run --auction-log LOG` (the
// cluster, the offer and every bid as the apps sent them), one table row per log and solver: of the auctions
// with at least --min-bidders bidders (default 10), --instances of them (default 32) spread evenly over the run.
// --slot-gpus: GPUs per slot of the 8-GPU machines (default 2; 4 and 8 are the simulator's msr clusters, where
// the offered half of the slots is then whole 4-GPU slots or whole machines);
// --apps: the generated bidders, elastic apps of one job (default; the instances above) or apps of rigid gangs
// as themis-sim's and the launcher's apps are by default (make_gang_instance);
// --budget: time budget of one auction in seconds (default 2; 0: none); --instances: per size (default 32 up to 64 GPUs,
// else 16); --first: the generated instances (also those --symmetry counts) start at index K (default 0), so that one
// instance is timed alone (--first 25 --instances 1; a dump keeps the index in its name; not with --recorded);
// --solvers: default bnb,cbc,shape; bnb-lagrangian is bnb without its LP search; dfs+NAME
// first runs the policy's exact searches (small_search.h) with their default budget, then NAME, and
// dfsN+NAME with N nodes and N states; shape and cbc-shape solve the shape problem of the same bids
// (rows as shapes over their scope, core/bid.h),
// the others every row's GPUs literally; "disagree" compares with CBC on the same problem; --symmetry: solve
// nothing, count the swaps of two GPUs or two slots that map an instance onto itself; --dump DIR: write each
// instance's shape problem, every solver's PF solve and its whole auction (ms, nodes, solves) there as JSON
// (dump_instance); --threads: the solves
// without each winner on up to N threads (AuctionLimits::threads; default 1; reentrant solvers only, CPU
// times count every thread); --restart-pf: after the table, each instance's PF solve by every solver again, alone
// and from a fresh memory, once cold and once started from the packing the auction's PF solve found (where that
// was proven, the optimum), to split a solve's cost between finding its packing and proving it (one line per
// instance and solver). Solvers run one after the other on each instance, so machine load hits them alike.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_support.h"
#include "bidder/app_model.h"
#include "bidder/bid_generator.h"
#include "bidder/slowdown.h"
#include "policy/arbiter/branch_and_bound_solver.h"
#include "policy/arbiter/packing_problem.h"
#include "policy/arbiter/partial_allocation.h"
#include "policy/arbiter/shape_problem.h"
#include "policy/arbiter/shape_solver.h"
#include "policy/arbiter/bid_validation.h"
#include "policy/arbiter/themis_policy.h"
#include "policy/planner/record_json.h"
#include "core/rng.h"
#include "core/topology.h"

namespace themis::arbiter {
namespace {

constexpr int kGpusPerMachine = 8;
constexpr int kMachinesPerRack = 4;

// GPUs per slot: 2 by default (4 slots per machine); --slot-gpus 4 or 8 models the simulator's msr clusters,
// where a machine is two 4-GPU slots or one 8-GPU slot.
int slot_gpus = 2;

// --apps: which bidders the generated instances have: "elastic" (make_bidder_instance, the default) or "gangs"
// (make_gang_instance).
std::string app_family = "elastic";

// --dump DIR: each instance's shape problem and every solver's PF solve, as JSON, for work on solvers outside
// this program (one file per instance: DIR/BIDDERSxGPUS-INDEX.json; DIR is made where missing).
std::string dump_dir;
int solve_threads = 1;  // --threads: AuctionLimits::threads
int first_instance = 0;  // --first: the index of the first generated instance
bool restart_pf = false;  // --restart-pf

Cluster bench_cluster(int gpus) {
  ClusterSpec spec{"bench", {}};
  const std::vector<int> slots(static_cast<std::size_t>(kGpusPerMachine / slot_gpus), slot_gpus);
  for (int m = 0; m < (gpus + kGpusPerMachine - 1) / kGpusPerMachine; ++m)
    spec.machines.push_back({"m" + std::to_string(m), "r" + std::to_string(m / kMachinesPerRack), slots});
  return Cluster(spec);
}

// The bidder library's slowdown priors (same machine 1.0, same rack 1.1, cross rack 1.3).
double slowdown(Locality l) { return bidder::SlowdownModel().prior(l); }

struct Instance {
  PackingProblem concrete;  // every row's GPUs literally (bnb, cbc)
  ShapeProblem shaped;      // rows as shapes over their scope (shape, cbc-shape: shaped.packing)
};

// Bids from the bidder library over a fragmented offer: `gpus` GPUs of a cluster twice that size.
// The offer of a busy, fragmented cluster: `gpus` GPUs in whole slots, a random half of the cluster's slots; the
// GPUs of the other half go to `busy`.
Offer fragmented_offer(const Cluster& cluster, int gpus, Rng& rng, std::vector<GpuIndex>& busy) {
  std::vector<int> slots(static_cast<std::size_t>(cluster.size() / slot_gpus));
  for (std::size_t s = 0; s < slots.size(); ++s) slots[s] = static_cast<int>(s);
  for (std::size_t s = slots.size(); s > 1; --s) std::swap(slots[s - 1], slots[rng.below(s)]);
  std::vector<char> free(static_cast<std::size_t>(cluster.size()), 0);
  for (int k = 0; k < gpus / slot_gpus; ++k)
    for (int g = 0; g < slot_gpus; ++g) free[static_cast<std::size_t>(slot_gpus * slots[static_cast<std::size_t>(k)] + g)] = 1;
  Offer offer{1, {}};
  for (GpuIndex g = 0; g < cluster.size(); ++g) (free[static_cast<std::size_t>(g)] ? offer.gpus : busy).push_back(g);
  return offer;
}

Instance make_bidder_instance(int bidders, int gpus, std::uint64_t seed) {
  const Cluster cluster = bench_cluster(2 * gpus);
  Rng rng(seed);
  std::vector<GpuIndex> busy;
  const Offer offer = fragmented_offer(cluster, gpus, rng, busy);

  const int demands[] = {1, 2, 2, 4, 4, 8, 8, 16, 32};
  std::vector<Bid> bids;
  for (int b = 0; b < bidders; ++b) {
    const int demand = std::min(demands[rng.below(9)], std::max(1, gpus / 2));
    const double t_id = 2000 + 18000 * rng.uniform();
    const double work = demand * (1000 + 20000 * rng.uniform());
    const double elapsed = 5000 * rng.uniform();
    const int held = rng.uniform() < 0.5 ? 0 : 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(demand)));
    // Held GPUs: a run of busy GPUs (other bidders may hold some of the same; it does not matter here).
    std::vector<GpuIndex> held_gpus;
    const std::size_t start = rng.below(busy.size());
    for (int k = 0; k < held; ++k) held_gpus.push_back(busy[(start + static_cast<std::size_t>(k)) % busy.size()]);
    std::sort(held_gpus.begin(), held_gpus.end());
    held_gpus.erase(std::unique(held_gpus.begin(), held_gpus.end()), held_gpus.end());
    const double rho_no_new = held > 0 ? (elapsed + work / held) / t_id : (elapsed + 600 + work) / t_id;
    const bidder::Valuation valuation = [&](int total, Locality placement) {
      return (elapsed + work * slowdown(placement) / total) / t_id;
    };
    bidder::BidSettings settings;
    settings.drop_non_improving = true;
    bids.push_back(bidder::generate_bid(cluster, offer, bidder::BidRequest{b, held_gpus, demand, rho_no_new},
                                        valuation, settings));
  }
  return {make_packing_problem(offer, bids, 64), make_shape_problem(cluster, offer, bids, 64)};
}

// --apps gangs: bidders are apps as themis-sim and the launcher model them by default (bidder::AppModel): each app
// has J jobs, each a rigid gang of w GPUs (w in {1, 1, 2, 4, 4, 8}, J in {1, 2, 4, 8}, J·w at most 32 and half
// the offer), every job its own serial work; half of the apps run some of their gangs on busy GPUs already, and
// the new GPUs start the waiting gangs of their own (BidQuery::gang). Gangs wider than one GPU pay the bidder
// library's slowdown priors by placement; one-GPU jobs never communicate and pay none. Every app is active, so
// N_avg is the number of bidders.
Instance make_gang_instance(int bidders, int gpus, std::uint64_t seed) {
  const Cluster cluster = bench_cluster(2 * gpus);
  Rng rng(seed);
  std::vector<GpuIndex> busy;
  const Offer offer = fragmented_offer(cluster, gpus, rng, busy);

  const int widths[] = {1, 1, 2, 4, 4, 8};
  const int job_counts[] = {1, 2, 4, 8};
  const int most = std::max(1, std::min(32, gpus / 2));
  std::vector<Bid> bids;
  for (int b = 0; b < bidders; ++b) {
    const int w = std::min(widths[rng.below(6)], most);
    const int jobs = std::max(1, std::min(job_counts[rng.below(4)], most / w));
    const int running = jobs > 1 && rng.uniform() < 0.5 ? 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(jobs - 1))) : 0;
    bidder::AppState state;
    state.elapsed = 5000 * rng.uniform();
    bidder::PhaseWork phase;
    phase.job_demand_max = w;
    Seconds total = 0, longest = 0;
    for (int j = 0; j < jobs; ++j) {
      const Seconds work = w * (1000 + 20000 * rng.uniform());
      phase.serial_work.push_back(work);
      total += work;
      longest = std::max(longest, work / w);
    }
    state.remaining.push_back(phase);
    state.remaining_job_gpus.push_back(std::vector<int>(static_cast<std::size_t>(jobs), w));
    state.life.push_back({total * (1 + rng.uniform()), static_cast<double>(jobs * w), longest});
    state.gang = w;
    state.smallest_bundle = w;
    state.demand_now = jobs * w;
    state.cluster_gpus = cluster.size();
    state.n_avg = bidders;
    state.lease = 600;
    const bidder::AppModel model(state);
    bidder::BidQuery query;
    query.app = b;
    query.held_gpus = running * w;
    query.remaining_demand = (jobs - running) * w;
    for (int l = 0; l < kLocalityLevels; ++l)
      query.slowdown[static_cast<std::size_t>(l)] = w > 1 ? slowdown(static_cast<Locality>(l)) : 1.0;
    const double ideal = query.slowdown[static_cast<std::size_t>(cluster.tightest_locality(w))];
    query.rho_no_new = model.rho_without_new(query.held_gpus, ideal, ideal);
    query.gang = w;
    bids.push_back(model.bid(cluster, offer, query));
  }
  return {make_packing_problem(offer, bids, 64), make_shape_problem(cluster, offer, bids, 64)};
}

// An auction from a themis-sim auction log, as the policy holds it: the bids validated (rows that do not fit
// the offer dropped; the log has no demands, so no row is dropped for its size), then the policy's 64 best
// rows per bidder.
Instance make_recorded_instance(const Cluster& cluster, const planner::AuctionInput& auction) {
  std::vector<ExpectedBidder> expected;
  for (const Bid& bid : auction.bids) expected.push_back({bid.app, std::numeric_limits<int>::max()});
  const ValidatedBids valid = validate_bids(auction.offer, auction.bids, expected);
  const int rows = ThemisSettings{}.max_rows_per_bidder;
  return {make_packing_problem(auction.offer, valid.accepted, rows), make_shape_problem(cluster, auction.offer, valid.accepted, rows)};
}

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1];
}

// Milliseconds with three significant digits, never in exponent form.
std::string ms(double v) {
  char text[32];
  std::snprintf(text, sizeof text, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
  return text;
}

struct Size {
  int bidders = 0;
  int gpus = 0;
};

struct SolverRuns {
  std::vector<double> wall_ms, cpu_ms;
  std::vector<PartialAllocation> results;
  int proven = 0;
  double worst_gap = 0;
  double winners = 0;
  std::int64_t nodes = 0;
};

// Both proved their optimum yet W* or some c_i differs.
bool disagree(const PartialAllocation& a, const PartialAllocation& b) {
  if (!a.proven_optimal || !b.proven_optimal) return false;
  if (std::abs(a.pf.value - b.pf.value) > 1e-7) return true;
  for (std::size_t i = 0; i < a.c.size(); ++i)
    if (std::abs(a.c[i] - b.c[i]) > 1e-7) return true;
  return false;
}

// A solver configuration: "bnb", "cbc", "shape", "bnb-lagrangian" (bnb without its LP search: the
// Lagrangian depth-first search alone, as bnb was before the LP search) or "cbc-shape" (CBC on the
// shape problem, the same problem `shape` solves); "shape-root-prices" is `shape` with the root's
// prices throughout (no subgradient steps at the nodes); "shape-lagrangian" is `shape` without LP bounds
// (its subgradient steps alone, as it was before them); "shape-noracks" is `shape` without the rack
// decomposition (rack_decomposition.h); "shape-stepsN" is `shape` with N subgradient
// steps per node instead of ShapeSolver::kDefaultNodeSteps, "shape-lpN" `shape` turning to LP bounds after N
// nodes instead of ShapeSolver::kDefaultLpFromNodes. "dfs+NAME": each solve first tries the
// depth-first search of small_search.h (as many nodes as the policy gives it before NAME's solver,
// default_small_search_nodes), then NAME.
// "dfsN+NAME": the same with N nodes (and N layered states).
constexpr std::string_view kShapeSteps = "shape-steps";
constexpr std::string_view kShapeLp = "shape-lp";
// Whether `name` is `prefix` followed by a number.
bool is_numbered(const std::string& name, std::string_view prefix) {
  return name.size() > prefix.size() && name.rfind(prefix, 0) == 0 &&
         name.find_first_not_of("0123456789", prefix.size()) == std::string::npos;
}
bool is_shape_variant(const std::string& name) { return is_numbered(name, kShapeSteps) || is_numbered(name, kShapeLp); }

std::string base_solver(const std::string& name) {
  if (name.rfind("dfs", 0) != 0) return name;
  const auto plus = name.find('+');
  return plus == std::string::npos ? name : name.substr(plus + 1);
}
// The policy's solver kind a configuration runs (bnb-lagrangian is bnb, cbc-shape CBC, shape-root-prices shape).
SolverKind solver_kind(const std::string& full_name) {
  const std::string name = base_solver(full_name);
  if (name == "bnb-lagrangian") return SolverKind::kBranchAndBound;
  if (name == "cbc-shape") return SolverKind::kCbc;
  if (name == "shape-root-prices" || name == "shape-lagrangian" || name == "shape-noracks" || is_shape_variant(name))
    return SolverKind::kShape;
  const auto kind = parse_solver_kind(name);
  if (!kind) throw std::invalid_argument("auction_bench: unknown solver " + name);
  return *kind;
}
std::int64_t small_search_nodes(const std::string& name) {
  if (name.rfind("dfs", 0) != 0 || name.find('+') == std::string::npos) return 0;
  const std::string digits = name.substr(3, name.find('+') - 3);
  return digits.empty() ? default_small_search_nodes(solver_kind(name)) : std::stoll(digits);
}

bool solves_shapes(const std::string& full_name) {
  const std::string name = base_solver(full_name);
  return name == "shape" || name == "cbc-shape" || name == "shape-root-prices" || name == "shape-lagrangian" ||
         name == "shape-noracks" || is_shape_variant(name);
}

std::unique_ptr<WinnerSolver> make_solver(const std::string& full_name) {
  const std::string name = base_solver(full_name);
  if (name == "bnb-lagrangian") return std::make_unique<BranchAndBoundSolver>(std::numeric_limits<std::int64_t>::max());
  if (name == "shape-root-prices") return std::make_unique<ShapeSolver>(0);
  if (name == "shape-lagrangian") return std::make_unique<ShapeSolver>(ShapeSolver::kDefaultNodeSteps, 0);
  if (name == "shape-noracks")
    return std::make_unique<ShapeSolver>(ShapeSolver::kDefaultNodeSteps, ShapeSolver::kDefaultLpFromNodes,
                                         ShapeSolver::kDefaultLpWorth, false);
  if (is_numbered(name, kShapeSteps)) return std::make_unique<ShapeSolver>(std::stoi(name.substr(kShapeSteps.size())));
  if (is_numbered(name, kShapeLp))
    return std::make_unique<ShapeSolver>(ShapeSolver::kDefaultNodeSteps, std::stoll(name.substr(kShapeLp.size())));
  return make_winner_solver(solver_kind(full_name));
}

// The shape problem (groups with their parents and capacities; per bidder, per row, its gain and what it asks
// of each group) and, per solver, the PF solve's value, bound and whether it was proven.
void dump_instance(const Size& size, int index, const Instance& instance, const std::map<std::string, SolverRuns>& runs) {
  nlohmann::json out;
  out["bidders"] = size.bidders;
  out["gpus"] = size.gpus;
  out["slot_gpus"] = slot_gpus;
  for (const ShapeGroup& g : instance.shaped.groups)
    out["groups"].push_back({{"level", g.level}, {"parent", g.parent}, {"capacity", g.gpus.size()}});
  const PackingProblem& p = instance.shaped.packing;
  for (std::size_t b = 0; b < p.bidders.size(); ++b) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t r = 0; r < p.bidders[b].rows.size(); ++r) {
      nlohmann::json asks = nlohmann::json::array();
      for (const ShapeDemand& d : instance.shaped.demands[b][r]) asks.push_back({d.group, d.count});
      rows.push_back({{"gain", p.bidders[b].rows[r].gain}, {"asks", asks}});
    }
    out["rows"].push_back(rows);
  }
  for (const auto& [name, r] : runs) {
    const PartialAllocation& pa = r.results.at(static_cast<std::size_t>(index));
    out["pf"][name] = {{"value", pa.pf.value}, {"bound", pa.pf.bound}, {"proven", pa.pf.proven_optimal},
                       {"shapes", solves_shapes(name)}};
    const auto i = static_cast<std::size_t>(index);
    out["auction"][name] = {{"wall_ms", r.wall_ms.at(i)}, {"cpu_ms", r.cpu_ms.at(i)}, {"nodes", pa.nodes},
                            {"solves", pa.solves}, {"settled_without_search", pa.settled_without_search},
                            {"proven", pa.proven_optimal}, {"gap", pa.gap}};
  }
  const std::string path = dump_dir + "/" + std::to_string(size.bidders) + "x" + std::to_string(size.gpus) + "-" +
                           std::to_string(first_instance + index) + ".json";
  std::ofstream file(path);
  if (!(file << out.dump() << "\n")) throw std::runtime_error("auction_bench: cannot write " + path);
}

// --restart-pf: each instance's PF solve by each solver again with the auction's budget, cold and from the PF packing
// the auction found; the node counts and times of the two show how much of a solve went into finding its packing.
void restart_pf_solves(const std::vector<Instance>& problems, double budget, const std::vector<std::string>& solvers,
                       const std::map<std::string, SolverRuns>& runs) {
  std::printf("\n| instance | solver | PF packing found (proven) | cold: proven, nodes, ms | from that packing: proven, nodes, ms |\n");
  std::printf("|---:|---|---:|---|---|\n");
  for (std::size_t i = 0; i < problems.size(); ++i)
    for (const std::string& name : solvers) {
      const PackingProblem& p = solves_shapes(name) ? problems[i].shaped.packing : problems[i].concrete;
      const PackingSolution& found = runs.at(name).results[i].pf;
      std::string cells[2];
      for (int from_found = 0; from_found < 2; ++from_found) {
        auto solver = make_solver(name);
        std::unique_ptr<SolverMemory> memory;
        std::vector<double> prices;
        const auto start = std::chrono::steady_clock::now();
        const PackingSolution again =
            solver->solve(p, -1, SolveLimits{budget, 0}, SolveHints{from_found != 0 ? &found.choice : nullptr, &prices, &memory});
        const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
        char text[96];
        std::snprintf(text, sizeof text, "%s, %lld, %s", again.proven_optimal ? "yes" : "no", static_cast<long long>(again.nodes),
                      ms(took.count()).c_str());
        cells[from_found] = text;
      }
      std::printf("| %zu | %s | %.4f (%s) | %s | %s |\n", i, name.c_str(), found.value, found.proven_optimal ? "yes" : "no",
                  cells[0].c_str(), cells[1].c_str());
    }
  std::fflush(stdout);
}

// Every solver on `problems`, one table row per solver; `columns` are the row's first cells ("20 | 64").
void run_instances(const std::string& columns, const Size& size, const std::vector<Instance>& problems, double budget,
                   const std::vector<std::string>& solvers) {
  const int instances = static_cast<int>(problems.size());
  double rows = 0, shape_rows = 0;
  for (const Instance& instance : problems) {
    for (const auto& b : instance.concrete.bidders) rows += static_cast<double>(b.rows.size());
    for (const auto& b : instance.shaped.packing.bidders) shape_rows += static_cast<double>(b.rows.size());
  }
  std::map<std::string, SolverRuns> runs;
  for (const Instance& instance : problems) {
    for (const std::string& name : solvers) {
      const PackingProblem& p = solves_shapes(name) ? instance.shaped.packing : instance.concrete;
      auto solver = make_solver(name);
      const double cpu_start = cpu_ms();
      const auto start = std::chrono::steady_clock::now();
      PartialAllocation pa = partial_allocation(p, *solver, AuctionLimits{budget, 0, small_search_nodes(name), solve_threads});
      const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
      SolverRuns& r = runs[name];
      r.cpu_ms.push_back(cpu_ms() - cpu_start);
      r.wall_ms.push_back(took.count());
      r.proven += pa.proven_optimal ? 1 : 0;
      r.worst_gap = std::max(r.worst_gap, pa.gap);
      for (int c : pa.pf.choice) r.winners += c >= 0 ? 1 : 0;
      r.nodes += pa.nodes;
      r.results.push_back(std::move(pa));
    }
  }
  if (!dump_dir.empty())
    for (int i = 0; i < instances; ++i) dump_instance(size, i, problems[static_cast<std::size_t>(i)], runs);
  const bool have_cbc = runs.contains("cbc");
  for (const std::string& name : solvers) {
    const SolverRuns& r = runs[name];
    const double p50 = percentile(r.wall_ms, 0.5), p95 = percentile(r.wall_ms, 0.95);
    const double cpu50 = percentile(r.cpu_ms, 0.5), cpu95 = percentile(r.cpu_ms, 0.95);
    std::string ratio = "-";
    int disagreements = 0;
    if (have_cbc && name != "cbc") {
      const SolverRuns& cbc = runs["cbc"];
      char text[64];
      std::snprintf(text, sizeof text, "%.1f / %.1f", percentile(cbc.cpu_ms, 0.5) / cpu50,
                    percentile(cbc.cpu_ms, 0.95) / cpu95);
      ratio = text;
    }
    // Disagreement is checked against CBC on the same problem (the shape problem is a different one:
    // its optimum can only be higher, since every concrete row is one realization of its shape).
    const std::string reference = solves_shapes(name) ? "cbc-shape" : "cbc";
    if (name != reference && runs.contains(reference)) {
      const SolverRuns& ref = runs[reference];
      for (std::size_t i = 0; i < r.results.size(); ++i) disagreements += disagree(r.results[i], ref.results[i]) ? 1 : 0;
    }
    std::printf("| %s | %.0f | %.1f | %s | %s | %s | %s | %s | %s | %d / %d | %.2g | %s | %d | %lld |\n",
                columns.c_str(), (solves_shapes(name) ? shape_rows : rows) / instances, r.winners / instances, name.c_str(), ms(p50).c_str(),
                ms(p95).c_str(), ms(percentile(r.wall_ms, 1.0)).c_str(), ms(cpu50).c_str(), ms(cpu95).c_str(),
                r.proven, instances, r.worst_gap, ratio.c_str(), disagreements, static_cast<long long>(r.nodes));
    std::fflush(stdout);
  }
  if (restart_pf) restart_pf_solves(problems, budget, solvers, runs);
}

void run_size(const Size& size, int instances, double budget, const std::vector<std::string>& solvers) {
  std::vector<Instance> problems;
  for (int i = first_instance; i < first_instance + instances; ++i) {
    const std::uint64_t seed = 1000 * static_cast<std::uint64_t>(size.bidders) + static_cast<std::uint64_t>(i);
    problems.push_back(app_family == "gangs" ? make_gang_instance(size.bidders, size.gpus, seed)
                                             : make_bidder_instance(size.bidders, size.gpus, seed));
  }
  run_instances(std::to_string(size.bidders) + " | " + std::to_string(size.gpus), size, problems, budget, solvers);
}

// The auctions of one auction log with at least `min_bidders` bidders, `instances` of them spread evenly over
// the run (all of them if fewer).
void run_recorded(const std::string& path, int min_bidders, int instances, double budget, const std::vector<std::string>& solvers) {
  std::ifstream file(path);
  if (!file) throw std::invalid_argument("auction_bench: cannot read " + path);
  std::string line;
  if (!std::getline(file, line)) throw std::invalid_argument("auction_bench: " + path + " is empty");
  std::optional<Cluster> cluster;
  try {
    cluster.emplace(planner::cluster_spec_from_json(nlohmann::json::parse(line).at("cluster")));
  } catch (const std::exception& e) {
    throw std::invalid_argument("auction_bench: " + path + ":1: not an auction log's cluster line: " + e.what());
  }
  std::vector<planner::AuctionInput> auctions;
  for (int number = 2; std::getline(file, line); ++number) {
    try {
      planner::AuctionInput a = planner::auction_from_json(nlohmann::json::parse(line));
      if (static_cast<int>(a.bids.size()) >= min_bidders) auctions.push_back(std::move(a));
    } catch (const std::exception& e) {
      throw std::invalid_argument("auction_bench: " + path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  if (auctions.empty()) {
    std::printf("| %s | no auction with %d or more bidders |\n", path.c_str(), min_bidders);
    return;
  }
  std::vector<Instance> problems;
  std::vector<double> bidders, gpus;
  const std::size_t take = std::min(auctions.size(), static_cast<std::size_t>(instances));
  for (std::size_t k = 0; k < take; ++k) {
    const planner::AuctionInput& a = auctions[k * auctions.size() / take];
    problems.push_back(make_recorded_instance(*cluster, a));
    bidders.push_back(static_cast<double>(a.bids.size()));
    gpus.push_back(static_cast<double>(a.offer.gpus.size()));
  }
  char columns[512];
  std::snprintf(columns, sizeof columns, "%s | %zu of %zu | %.0f / %.0f | %.0f / %.0f",
                std::filesystem::path(path).filename().c_str(), take, auctions.size(), percentile(bidders, 0.5),
                percentile(bidders, 1.0), percentile(gpus, 0.5), percentile(gpus, 1.0));
  run_instances(columns, Size{static_cast<int>(percentile(bidders, 0.5)), static_cast<int>(percentile(gpus, 0.5))}, problems,
                budget, solvers);
}

// Whether permuting the items by `perm` maps every bidder's rows onto its rows with the same gains (a
// symmetry of the problem itself, not only of one bidder's valuation).
bool is_automorphism(const PackingProblem& p, const std::vector<int>& perm) {
  std::map<std::pair<std::size_t, std::vector<int>>, double> rows;
  for (std::size_t b = 0; b < p.bidders.size(); ++b)
    for (const PackingRow& row : p.bidders[b].rows) rows[{b, row.items}] = row.gain;
  for (std::size_t b = 0; b < p.bidders.size(); ++b) {
    for (const PackingRow& row : p.bidders[b].rows) {
      std::vector<int> image;
      for (int g : row.items) image.push_back(perm[static_cast<std::size_t>(g)]);
      std::sort(image.begin(), image.end());
      const auto it = rows.find({b, image});
      if (it == rows.end() || it->second != row.gain) return false;
    }
  }
  return true;
}

// --symmetry: how many swaps of two offered GPUs, and of two offered slots (the offer is whole 2-GPU
// slots, so positions 2s and 2s + 1 are slot s), are symmetries of the instances.
void symmetry_counts(const Size& size, int instances) {
  long gpu_swaps = 0, gpu_symmetries = 0, slot_swaps = 0, slot_symmetries = 0;
  for (int i = first_instance; i < first_instance + instances; ++i) {
    const PackingProblem p = make_bidder_instance(
        size.bidders, size.gpus, 1000 * static_cast<std::uint64_t>(size.bidders) + static_cast<std::uint64_t>(i)).concrete;
    const auto n = static_cast<std::size_t>(p.item_count);
    std::vector<int> identity(n);
    for (std::size_t g = 0; g < n; ++g) identity[g] = static_cast<int>(g);
    for (std::size_t g = 0; g < n; ++g) {
      for (std::size_t h = g + 1; h < n; ++h) {
        std::vector<int> perm = identity;
        std::swap(perm[g], perm[h]);
        ++gpu_swaps;
        gpu_symmetries += is_automorphism(p, perm) ? 1 : 0;
      }
    }
    for (std::size_t s = 0; 2 * s + 1 < n; ++s) {
      for (std::size_t t = s + 1; 2 * t + 1 < n; ++t) {
        std::vector<int> perm = identity;
        std::swap(perm[2 * s], perm[2 * t]);
        std::swap(perm[2 * s + 1], perm[2 * t + 1]);
        ++slot_swaps;
        slot_symmetries += is_automorphism(p, perm) ? 1 : 0;
      }
    }
  }
  std::printf("| %d | %d | %d | %ld / %ld | %ld / %ld |\n", size.bidders, size.gpus, instances, gpu_symmetries,
              gpu_swaps, slot_symmetries, slot_swaps);
}

constexpr std::string_view kUsage =
    "usage: auction_bench [--budget SECONDS (2; 0: none)] [--instances N] [--first K] [--sizes 20x64,50x256,200x1024] [--slot-gpus 2|4|8]\n"
    "                     [--apps elastic|gangs] [--solvers bnb,cbc,shape (any of: bnb, cbc, shape, cbc-shape,\n"
    "                     bnb-lagrangian, shape-lagrangian, shape-noracks, shape-root-prices, shape-stepsN, shape-lpN, dfs+NAME,\n"
    "                     dfsN+NAME)] [--threads N (1)] [--dump DIR] [--restart-pf] [--symmetry]\n"
    "       auction_bench --recorded LOG[,LOG...] [--min-bidders N (10)] [--instances N (32)] [--budget SECONDS]\n"
    "                     [--solvers ...]\n"
    "  every solver on the same auctions, one table row per size (or log) and solver: wall and CPU ms, auctions\n"
    "  proven optimal, the worst gap, the speed against CBC (bench/auction_bench.cc says more)\n";

int run(int argc, char** argv) {
  double budget = 2.0;
  int instances = 0;
  std::vector<Size> sizes = {{20, 64}, {50, 256}, {200, 1024}};
  std::vector<std::string> solvers = {"bnb", "cbc", "shape"};
  bool symmetry = false;
  std::vector<std::string> recorded;
  int min_bidders = 10;
  for (int a = 1; a < argc; ++a) {
    const std::string_view flag = argv[a];
    if (flag == "--help" || flag == "-h") return bench::usage_for("auction_bench", flag, kUsage);
    if (flag == "--symmetry") {
      symmetry = true;
      continue;
    }
    if (flag == "--restart-pf") {
      restart_pf = true;
      continue;
    }
    constexpr std::string_view kValueFlags[] = {"--budget", "--instances", "--first", "--sizes", "--slot-gpus", "--apps",
                                                "--recorded", "--min-bidders", "--threads", "--dump", "--solvers"};
    if (std::find(std::begin(kValueFlags), std::end(kValueFlags), flag) == std::end(kValueFlags))
      return bench::usage_for("auction_bench", flag, kUsage);
    if (a + 1 >= argc) throw std::invalid_argument("auction_bench: " + std::string(flag) + " needs a value");
    const std::string value = argv[++a];
    if (flag == "--budget") {
      std::size_t used = 0;
      try {
        budget = std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != value.size() || !(budget >= 0))
        throw std::invalid_argument("auction_bench: --budget must be a number of seconds (0: none), got '" + value + "'");
    } else if (flag == "--instances") {
      instances = bench::positive_int("auction_bench: --instances", value);
    } else if (flag == "--first") {
      first_instance = bench::non_negative_int("auction_bench: --first", value);
    } else if (flag == "--sizes") {
      sizes.clear();
      for (const std::string& part : bench::split_commas(value)) {
        const auto x = part.find('x');
        if (x == std::string::npos) throw std::invalid_argument("auction_bench: --sizes wants BIDDERSxGPUS, got '" + part + "'");
        sizes.push_back({bench::positive_int("auction_bench: --sizes: bidders", part.substr(0, x)),
                         bench::positive_int("auction_bench: --sizes: GPUs", part.substr(x + 1))});
      }
    } else if (flag == "--slot-gpus") {
      slot_gpus = value == "2" ? 2 : value == "4" ? 4 : value == "8" ? 8 : 0;
      if (slot_gpus != 2 && slot_gpus != 4 && slot_gpus != 8)
        throw std::invalid_argument("auction_bench: --slot-gpus must be 2, 4 or 8, got " + value);
    } else if (flag == "--apps") {
      if (value != "elastic" && value != "gangs")
        throw std::invalid_argument("auction_bench: --apps must be elastic or gangs, got " + value);
      app_family = value;
    } else if (flag == "--recorded") {
      recorded = bench::split_commas(value);
    } else if (flag == "--min-bidders") {
      min_bidders = bench::positive_int("auction_bench: --min-bidders", value);
    } else if (flag == "--threads") {
      solve_threads = bench::positive_int("auction_bench: --threads", value);
    } else if (flag == "--dump") {
      // Made here, so that a path that cannot be written stops the run before its auctions, not after them.
      dump_dir = value;
      std::error_code error;
      std::filesystem::create_directories(dump_dir, error);
      if (error || !std::filesystem::is_directory(dump_dir))
        throw std::invalid_argument("auction_bench: --dump " + dump_dir + ": cannot make the directory" +
                                    (error ? ": " + error.message() : ""));
    } else if (flag == "--solvers") {
      solvers = bench::split_commas(value);
      for (const std::string& name : solvers) make_solver(name);  // rejects unknown names up front
    }
  }
  if (symmetry) {
    if (slot_gpus != 2) throw std::invalid_argument("auction_bench: --symmetry counts 2-GPU slots only");
    std::printf("| bidders | GPUs | instances | GPU swaps that are symmetries | slot swaps that are symmetries |\n");
    std::printf("|---:|---:|---:|---:|---:|\n");
    for (const Size& size : sizes) symmetry_counts(size, instances > 0 ? instances : 4);
    return 0;
  }
  std::printf("budget %.3g s per auction, the solves without each winner on up to %d thread(s); ms per auction (wall p50/p95/max, CPU p50/p95); proven: auctions with "
              "all N+1 solves proven optimal; x CBC: CBC CPU time / this solver's (p50 / p95); disagree: both "
              "proven, W* or a c_i differs by > 1e-7; nodes: every auction's solves, summed (the searches that settled them)\n\n",
              budget, solve_threads);
  if (!recorded.empty() && first_instance != 0)
    throw std::invalid_argument("auction_bench: --first picks generated instances; --recorded spreads its own over each log");
  if (!recorded.empty()) {
    if (!dump_dir.empty()) throw std::invalid_argument("auction_bench: --dump writes generated instances only");
    std::printf("| auction log | auctions timed of those with >= %d bidders | bidders p50 / max | GPUs offered p50 / max | rows "
                "| winners | solver | p50 ms | p95 ms | max ms | CPU p50 ms | CPU p95 ms | proven | max gap | x CBC (p50 / p95) | disagree "
                "| nodes |\n",
                min_bidders);
    std::printf("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const std::string& path : recorded) run_recorded(path, min_bidders, instances > 0 ? instances : 32, budget, solvers);
    return 0;
  }
  std::printf("| bidders | GPUs | rows | winners | solver | p50 ms | p95 ms | max ms | CPU p50 ms | CPU p95 ms "
              "| proven | max gap | x CBC (p50 / p95) | disagree | nodes |\n");
  std::printf("|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Size& size : sizes)
    run_size(size, instances > 0 ? instances : (size.gpus <= 64 ? 32 : 16), budget, solvers);
  return 0;
}

}  // namespace
}  // namespace themis::arbiter

int main(int argc, char** argv) {
  try {
    return themis::arbiter::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
