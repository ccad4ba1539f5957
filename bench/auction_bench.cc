// A whole partial-allocation auction (the PF solve plus one solve per winner) over (bidders, offered
// GPUs), on clusters of 8-GPU machines (4 slots × 2 GPUs, 4 machines per rack). Two bid sources:
//  - `Bidder`: the real bid generator (bidder/bid_generator.h). The cluster has twice the offered GPUs;
//    the offer is a random half of its slots (a fragmented, busy cluster); a bidder may hold GPUs of
//    the busy half; every bidder bids on the same offer, so bidders compete for the same best bundles.
//  - `Prefix`: a synthetic source, every GPU offered; each bidder bids, for each useful count, bundles
//    that start at GPU 0 of its home machine and the next ones (one winner per machine at most).
// Each bidder has a demand in {1, 2, 4, 8, 16, 32} and ρ = (elapsed + work·S(locality)/GPUs) / T_id with
// S = 1.0 / 1.1 / 1.3 for one machine / one rack / cross rack. Seeded: the same instances on every run.
//
// Each benchmark times `auctions` auctions over 16 instances and reports p50/p95/max in ms and the
// largest optimality gap as counters. Solver time budget: 2 s per auction.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <vector>

#include "bidder/bid_generator.h"
#include "policy/arbiter/packing_problem.h"
#include "policy/arbiter/partial_allocation.h"
#include "core/rng.h"
#include "core/topology.h"

namespace themis::arbiter {
namespace {

constexpr int kGpusPerMachine = 8;
constexpr int kMachinesPerRack = 4;
constexpr int kInstances = 16;
constexpr double kBudgetSeconds = 2.0;

Cluster bench_cluster(int gpus) {
  ClusterSpec spec{"bench", {}};
  for (int m = 0; m < (gpus + kGpusPerMachine - 1) / kGpusPerMachine; ++m)
    spec.machines.push_back({"m" + std::to_string(m), "r" + std::to_string(m / kMachinesPerRack), {2, 2, 2, 2}});
  return Cluster(spec);
}

double slowdown(Locality l) {
  switch (l) {
    case Locality::kSameSlot:
    case Locality::kSameMachine: return 1.0;
    case Locality::kSameRack: return 1.1;
    case Locality::kCrossRack: return 1.3;
  }
  return 1.3;
}

// `count` GPUs starting on machine `first`, filling machines in order (wrapping around).
std::vector<GpuIndex> bundle_from(int machines, int first, int count) {
  std::vector<GpuIndex> gpus;
  for (int m = first; static_cast<int>(gpus.size()) < count; m = (m + 1) % machines)
    for (int k = 0; k < kGpusPerMachine && static_cast<int>(gpus.size()) < count; ++k)
      gpus.push_back(m * kGpusPerMachine + k);
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

enum class BidSource { kBidder, kPrefix };

// Bids from the bidder library over a fragmented offer: `gpus` GPUs of a cluster twice that size.
PackingProblem make_bidder_instance(int bidders, int gpus, std::uint64_t seed) {
  const Cluster cluster = bench_cluster(2 * gpus);
  Rng rng(seed);
  // Free slots (2 GPUs each): a random half of them.
  std::vector<int> slots(static_cast<std::size_t>(cluster.size() / 2));
  for (std::size_t s = 0; s < slots.size(); ++s) slots[s] = static_cast<int>(s);
  for (std::size_t s = slots.size(); s > 1; --s) std::swap(slots[s - 1], slots[rng.below(s)]);
  std::vector<char> free(static_cast<std::size_t>(cluster.size()), 0);
  for (int k = 0; k < gpus / 2; ++k) {
    free[static_cast<std::size_t>(2 * slots[static_cast<std::size_t>(k)])] = 1;
    free[static_cast<std::size_t>(2 * slots[static_cast<std::size_t>(k)] + 1)] = 1;
  }
  Offer offer{1, {}};
  std::vector<GpuIndex> busy;
  for (GpuIndex g = 0; g < cluster.size(); ++g) (free[static_cast<std::size_t>(g)] ? offer.gpus : busy).push_back(g);

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
  return make_packing_problem(offer, bids, 64);
}

PackingProblem make_prefix_instance(int bidders, int gpus, std::uint64_t seed) {
  const Cluster cluster = bench_cluster(gpus);
  const int machines = static_cast<int>(cluster.machines().size());
  Offer offer{1, {}};
  for (GpuIndex g = 0; g < cluster.size(); ++g) offer.gpus.push_back(g);
  Rng rng(seed);
  std::vector<Bid> bids;
  const int demands[] = {1, 2, 2, 4, 4, 8, 8, 16, 32};
  for (int b = 0; b < bidders; ++b) {
    const int demand = std::min(demands[rng.below(9)], std::max(1, gpus / 2));
    const double t_id = 2000 + 18000 * rng.uniform();
    const double work = demand * (1000 + 20000 * rng.uniform());
    const double elapsed = 5000 * rng.uniform();
    const int held = rng.uniform() < 0.5 ? 0 : 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(demand)));
    Bid bid{b, held > 0 ? (elapsed + work / held) / t_id : (elapsed + 600 + work) / t_id, {}};
    std::vector<int> counts;
    for (int k = 1; k <= demand; k = k < 8 ? k + 1 : k + 8) counts.push_back(k);
    if (counts.back() != demand) counts.push_back(demand);
    const int per_count = std::clamp(30 / static_cast<int>(counts.size()), 1, 3);
    const int home = static_cast<int>(rng.below(static_cast<std::uint64_t>(machines)));
    for (int k : counts) {
      for (int alt = 0; alt < per_count && static_cast<int>(bid.rows.size()) < 30; ++alt) {
        const int first = (home + alt * std::max(1, (k + kGpusPerMachine - 1) / kGpusPerMachine)) % machines;
        std::vector<GpuIndex> gpus_of_row = bundle_from(machines, first, k);
        const double s = slowdown(cluster.locality(gpus_of_row));
        const double rho = (elapsed + work * s / (held + k)) / t_id;
        bid.rows.push_back({std::move(gpus_of_row), rho});
        if (k > machines * kGpusPerMachine / 2) break;
      }
    }
    bids.push_back(std::move(bid));
  }
  return make_packing_problem(offer, bids, 64);
}

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

void auction(benchmark::State& state, SolverKind kind, BidSource source) {
  const int bidders = static_cast<int>(state.range(0));
  const int gpus = static_cast<int>(state.range(1));
  std::vector<PackingProblem> instances;
  for (int i = 0; i < kInstances; ++i) {
    const std::uint64_t seed = 1000 * static_cast<std::uint64_t>(bidders) + static_cast<std::uint64_t>(i);
    instances.push_back(source == BidSource::kBidder ? make_bidder_instance(bidders, gpus, seed)
                                                     : make_prefix_instance(bidders, gpus, seed));
  }
  auto solver = make_winner_solver(kind);
  std::vector<double> millis, cpu_millis;
  double worst_gap = 0, rows = 0, winners = 0;
  int unproven = 0;
  std::size_t next = 0;
  for (auto _ : state) {
    const PackingProblem& p = instances[next++ % instances.size()];
    const double cpu_start = cpu_ms();
    const auto start = std::chrono::steady_clock::now();
    const PartialAllocation pa = partial_allocation(p, *solver, AuctionLimits{kBudgetSeconds, 0});
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    cpu_millis.push_back(cpu_ms() - cpu_start);
    benchmark::DoNotOptimize(pa.c.data());
    millis.push_back(took.count());
    worst_gap = std::max(worst_gap, pa.gap);
    unproven += pa.gap > 0 ? 1 : 0;
    for (const auto& b : p.bidders) rows += static_cast<double>(b.rows.size());
    for (int c : pa.pf.choice) winners += c >= 0 ? 1 : 0;
  }
  std::sort(millis.begin(), millis.end());
  std::sort(cpu_millis.begin(), cpu_millis.end());
  auto pct = [](const std::vector<double>& v, double q) {
    return v[static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1];
  };
  const auto n = static_cast<double>(millis.size());
  state.counters["p50_ms"] = pct(millis, 0.50);
  state.counters["p95_ms"] = pct(millis, 0.95);
  state.counters["max_ms"] = millis.back();
  state.counters["cpu_p50_ms"] = pct(cpu_millis, 0.50);
  state.counters["cpu_p95_ms"] = pct(cpu_millis, 0.95);
  state.counters["max_gap"] = worst_gap;
  state.counters["unproven"] = unproven;
  state.counters["rows"] = rows / n;
  state.counters["winners"] = winners / n;
}

void BM_AuctionBranchAndBound_Bidder(benchmark::State& s) { auction(s, SolverKind::kBranchAndBound, BidSource::kBidder); }
void BM_AuctionCbc_Bidder(benchmark::State& s) { auction(s, SolverKind::kCbc, BidSource::kBidder); }
void BM_AuctionBranchAndBound_Prefix(benchmark::State& s) { auction(s, SolverKind::kBranchAndBound, BidSource::kPrefix); }
void BM_AuctionCbc_Prefix(benchmark::State& s) { auction(s, SolverKind::kCbc, BidSource::kPrefix); }

// Small sizes: 64 auctions each; large: 16 (each may run to the 2 s budget).
#define THEMIS_AUCTION_SIZES(fn)                                                                    \
  BENCHMARK(fn)->ArgNames({"bidders", "gpus"})->Unit(benchmark::kMillisecond)->UseRealTime()       \
      ->Iterations(64)->Args({5, 16})->Args({10, 32})->Args({20, 64});                             \
  BENCHMARK(fn)->ArgNames({"bidders", "gpus"})->Unit(benchmark::kMillisecond)->UseRealTime()       \
      ->Iterations(16)->Args({50, 256})->Args({100, 512})->Args({200, 1024})
THEMIS_AUCTION_SIZES(BM_AuctionBranchAndBound_Bidder);
THEMIS_AUCTION_SIZES(BM_AuctionCbc_Bidder);
THEMIS_AUCTION_SIZES(BM_AuctionBranchAndBound_Prefix);
THEMIS_AUCTION_SIZES(BM_AuctionCbc_Prefix);

}  // namespace
}  // namespace themis::arbiter

BENCHMARK_MAIN();
