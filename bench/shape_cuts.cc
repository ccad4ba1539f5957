// How much of the gap between the LP bound and the best packing known each family of cuts closes at the root, on
// the shape problems `auction_bench --dump DIR` writes (docs/performance.md, "Where a solve's time goes, and cuts at the root").
//
//   shape_cuts FILE.json... [--families gomory,twomir,knapsack,clique,oddhole,zerohalf] [--rounds N]
//   shape_cuts FILE.json... --racks
//   shape_cuts FILE.json... --without [--families ...] [--rounds N]
//
// With --racks, the same for the rack decomposition (policy/arbiter/rack_decomposition.h; docs/performance.md, "Racks
// as blocks"): its bound, whether its packing is proven optimal, the master LP solves and milliseconds it took.
//
// With --without, the same for the problems without each winner of the PF optimum (solved first by the `shape`
// solver, no budget, as the auction does): per winner, its optimum W*_{-i}, the LP's bound, the bound after one round
// and after up to N rounds of the families' cuts (all of them together) and the rack decomposition's bound, each
// above W*_{-i}, with the share of the LP's gap closed (docs/performance.md, "Cuts at the root of the solves without
// a winner").
//
// Per file and family (each alone, then all of them together): the LP bound, the bound after up to N rounds of
// that family's cuts (each round followed by a dual simplex re-solve; it stops at a round that finds none), the
// share of the gap closed, the cuts added and the milliseconds the rounds took. The LP is the one the solvers
// relax: each bidder takes at most one row, every group within its capacity; a row takes, for every GPU it asks of
// a group, one unit of that group and of each group above it. "Best" is the best PF packing the dump holds.
#include <CglClique.hpp>
#include <CglCutGenerator.hpp>
#include <CglGomory.hpp>
#include <CglKnapsackCover.hpp>
#include <CglOddHole.hpp>
#include <CglTwomir.hpp>
#include <CglZeroHalf.hpp>
#include <OsiClpSolverInterface.hpp>
#include <OsiCuts.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_support.h"
#include "policy/arbiter/coin_matrix.h"
#include "policy/arbiter/deadline.h"
#include "policy/arbiter/partial_allocation.h"
#include "policy/arbiter/rack_decomposition.h"
#include "policy/arbiter/shape_solver.h"

namespace {

struct Bounds {
  double lp = 0, cut = 0, ms = 0;
  int cuts = 0;
  double first_cut = 0, first_ms = 0;  // the bound and milliseconds after the first round (the LP's where none ran)
};

std::unique_ptr<CglCutGenerator> make_generator(const std::string& family) {
  if (family == "gomory") return std::make_unique<CglGomory>();
  if (family == "twomir") return std::make_unique<CglTwomir>();
  if (family == "knapsack") return std::make_unique<CglKnapsackCover>();
  if (family == "clique") {
    auto clique = std::make_unique<CglClique>();
    clique->setStarCliqueReport(false);
    clique->setRowCliqueReport(false);
    return clique;
  }
  if (family == "oddhole") return std::make_unique<CglOddHole>();
  if (family == "zerohalf") return std::make_unique<CglZeroHalf>();
  throw std::invalid_argument("shape_cuts: unknown family '" + family + "'" +
                              " (gomory, twomir, knapsack, clique, oddhole, zerohalf)");
}

// The dump's shape problem as the arbiter builds it: every group an item with its capacity, in the rack of its level-3
// ancestor (none above the racks); a row takes, for every GPU it asks of a group, a unit of that group and of each
// group above it.
themis::arbiter::PackingProblem packing_problem(const nlohmann::json& dump) {
  themis::arbiter::PackingProblem problem;
  std::vector<int> parent, level;
  for (const auto& g : dump.at("groups")) {
    parent.push_back(g.at("parent").get<int>());
    level.push_back(g.at("level").get<int>());
    problem.item_capacity.push_back(g.at("capacity").get<int>());
  }
  problem.item_count = static_cast<int>(parent.size());
  std::map<int, int> rack_index;
  for (int g = 0; g < problem.item_count; ++g) {
    int rack = g;
    while (rack >= 0 && level[static_cast<std::size_t>(rack)] < 3) rack = parent[static_cast<std::size_t>(rack)];
    problem.item_rack.push_back(rack >= 0 && level[static_cast<std::size_t>(rack)] == 3
                                    ? rack_index.try_emplace(rack, static_cast<int>(rack_index.size())).first->second
                                    : -1);
  }
  for (const auto& rows : dump.at("rows")) {
    themis::arbiter::PackingBidder bidder;
    bidder.app = static_cast<themis::AppId>(problem.bidders.size() + 1);
    for (const auto& row : rows) {
      themis::arbiter::PackingRow packed{static_cast<int>(bidder.rows.size()), row.at("gain").get<double>(), {}};
      for (const auto& ask : row.at("asks"))
        for (int g = ask[0].get<int>(); g >= 0; g = parent[static_cast<std::size_t>(g)])
          packed.items.insert(packed.items.end(), ask[1].get<std::size_t>(), g);
      std::sort(packed.items.begin(), packed.items.end());
      bidder.rows.push_back(std::move(packed));
    }
    problem.bidders.push_back(std::move(bidder));
  }
  return problem;
}

// `excluded`: a bidder whose rows are fixed at 0 (-1: none).
Bounds root_bounds(const themis::arbiter::PackingProblem& problem, const std::vector<std::string>& families, int rounds,
                   int excluded = -1) {
  OsiClpSolverInterface lp;
  lp.messageHandler()->setLogLevel(0);
  const std::vector<themis::arbiter::PackingColumn> columns =
      themis::arbiter::load_packing_lp(lp, problem, [](int, int) { return true; });
  if (columns.empty()) throw std::runtime_error("shape_cuts: the problem has no rows");
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (columns[c].bidder == excluded) lp.setColUpper(static_cast<int>(c), 0.0);
  lp.initialSolve();
  if (!lp.isProvenOptimal()) throw std::runtime_error("shape_cuts: the root LP was not solved");
  Bounds out;
  out.lp = -lp.getObjValue();
  out.first_cut = out.lp;
  std::vector<std::unique_ptr<CglCutGenerator>> generators;
  for (const std::string& f : families) generators.push_back(make_generator(f));
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < rounds; ++round) {
    OsiCuts cuts;
    for (auto& g : generators) g->generateCuts(lp, cuts);
    if (cuts.sizeRowCuts() == 0) break;
    out.cuts += cuts.sizeRowCuts();
    lp.applyCuts(cuts);
    lp.resolve();
    if (!lp.isProvenOptimal()) throw std::runtime_error("shape_cuts: the LP with cuts was not solved");
    if (round == 0) {
      out.first_cut = -lp.getObjValue();
      out.first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
  }
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  out.cut = -lp.getObjValue();
  return out;
}

double above(double bound, double best) { return 100 * (bound - best) / best; }
// The share of the LP's gap a bound closes; a bound above the LP (by its tolerances) closes none.
double closed(double lp, double bound, double best) {
  return lp > best ? std::max(0.0, 100 * (lp - bound) / (lp - best)) : 100.0;
}

// --without: one table row per winner of the PF optimum.
void print_without_each_winner(const std::string& name, const themis::arbiter::PackingProblem& problem,
                               const std::vector<std::string>& families, int rounds) {
  themis::arbiter::ShapeSolver solver;
  const themis::arbiter::PartialAllocation auction =
      themis::arbiter::partial_allocation(problem, solver, themis::arbiter::AuctionLimits{});
  for (std::size_t i = 0; i < problem.bidders.size(); ++i) {
    if (auction.pf.choice[i] < 0) continue;
    const double best = auction.value_without[i];
    const Bounds more = root_bounds(problem, families, rounds, static_cast<int>(i));
    const themis::arbiter::RackBound racks =
        themis::arbiter::RackDecomposition().solve(problem, static_cast<int>(i), themis::arbiter::Deadline(0));
    std::printf("| %s | %zu | %.4f | %.2f%% | %.2f%% (%.0f%%, %.1f ms) | %.2f%% (%.0f%%, %.1f ms) | ", name.c_str(), i, best,
                above(more.lp, best), above(more.first_cut, best), closed(more.lp, more.first_cut, best), more.first_ms,
                above(more.cut, best), closed(more.lp, more.cut, best), more.ms);
    if (racks.available)
      std::printf("%.2f%% (%.0f%%) |\n", above(racks.bound, best), closed(more.lp, racks.bound, best));
    else
      std::printf("- |\n");
  }
}

}  // namespace

constexpr std::string_view kUsage =
    "usage: shape_cuts FILE.json... [--families gomory,twomir,knapsack,clique,oddhole,zerohalf] [--rounds N (10)]\n"
    "       shape_cuts FILE.json... --racks\n"
    "       shape_cuts FILE.json... --without [--families ...] [--rounds N]\n"
    "  the share of the root LP's gap each family of cuts (or the rack decomposition) closes, on the files of\n"
    "  auction_bench --dump DIR; --without: on the problems without each winner of the PF optimum\n";

int main(int argc, char** argv) {
  try {
    std::vector<std::string> files;
    std::vector<std::string> families = {"gomory", "twomir", "knapsack", "clique", "oddhole", "zerohalf"};
    int rounds = 10;
    bool racks = false;
    bool without = false;
    for (int a = 1; a < argc; ++a) {
      const std::string arg = argv[a];
      if (arg == "--racks" || arg == "--without") {
        (arg == "--racks" ? racks : without) = true;
        continue;
      }
      if (arg.starts_with("-") && arg != "--families" && arg != "--rounds")
        return themis::bench::usage_for("shape_cuts", arg, kUsage);
      if (arg == "--families" || arg == "--rounds") {
        if (a + 1 >= argc) throw std::invalid_argument("shape_cuts: " + arg + " needs a value");
        const std::string value = argv[++a];
        if (arg == "--families") families = themis::bench::split_commas(value);
        else rounds = themis::bench::positive_int("shape_cuts: --rounds", value);
      } else {
        files.push_back(arg);
      }
    }
    if (files.empty()) {
      std::fprintf(stderr, "%.*s", static_cast<int>(kUsage.size()), kUsage.data());
      return 2;
    }
    for (const std::string& f : families) make_generator(f);  // rejects unknown names up front
    if (racks && without) throw std::invalid_argument("shape_cuts: --racks and --without do not go together");
    if (without)
      std::printf("| instance | without | W*_{-i} | LP bound above it | 1 round (gap closed, ms) | rounds ≤ %d | racks (closed) |\n"
                  "|---|---:|---:|---:|---:|---:|---:|\n", rounds);
    else if (racks)
      std::printf("| instance | best packing | LP bound (above best) | racks: bound (above best) | gap closed | proven | master solves | ms |\n"
                  "|---|---:|---:|---:|---:|---|---:|---:|\n");
    else
      std::printf("| instance | best packing | LP bound (above best) | cuts | rounds ≤ %d: bound (above best) | gap closed | cuts added | ms |\n"
                  "|---|---:|---:|---|---:|---:|---:|---:|\n", rounds);
    for (const std::string& path : files) {
      std::ifstream in(path);
      if (!in) throw std::invalid_argument("shape_cuts: cannot read " + path);
      nlohmann::json dump;
      try {
        dump = nlohmann::json::parse(in);
      } catch (const std::exception& e) {
        throw std::invalid_argument("shape_cuts: " + path + ": not JSON: " + e.what());
      }
      std::vector<std::vector<std::string>> sets;
      for (const std::string& f : families) sets.push_back({f});
      if (families.size() > 1) sets.push_back(families);
      const std::string name = path.substr(path.find_last_of('/') + 1);
      try {
        double best = 0;
        for (const auto& [solver, pf] : dump.at("pf").items()) best = std::max(best, pf.at("value").get<double>());
        const themis::arbiter::PackingProblem problem = packing_problem(dump);
        if (without) {
          print_without_each_winner(name, problem, families, rounds);
          continue;
        }
        if (racks) {
          const double lp = root_bounds(problem, {}, 0).lp;
          const auto start = std::chrono::steady_clock::now();
          const themis::arbiter::RackBound got =
              themis::arbiter::RackDecomposition().solve(problem, -1, themis::arbiter::Deadline(0));
          const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
          if (!got.available) throw std::invalid_argument("shape_cuts: " + path + ": does not decompose by racks");
          std::printf("| %s | %.4f | %.4f (%.2f%%) | %.4f (%.2f%%) | %.0f%% | %s | %d | %.1f |\n", name.c_str(), best, lp,
                      above(lp, best), got.bound, above(got.bound, best), closed(lp, got.bound, best),
                      got.proven ? "yes" : "no", got.iterations, ms);
          continue;
        }
        for (const auto& set : sets) {
          const Bounds b = root_bounds(problem, set, rounds);
          const std::string label = set.size() == 1 ? set[0] : "all of them";
          std::printf("| %s | %.4f | %.4f (%.2f%%) | %s | %.4f (%.2f%%) | %.0f%% | %d | %.1f |\n", name.c_str(), best, b.lp,
                      above(b.lp, best), label.c_str(), b.cut, above(b.cut, best), closed(b.lp, b.cut, best), b.cuts, b.ms);
        }
      } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument("shape_cuts: " + path + ": not a dump of auction_bench --dump: " + e.what());
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
