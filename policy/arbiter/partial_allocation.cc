#include "policy/arbiter/partial_allocation.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include "policy/arbiter/cut_bound.h"
#include "policy/arbiter/cut_bound_beside.h"
#include "policy/arbiter/deadline.h"
#include "policy/arbiter/displacement.h"
#include "policy/arbiter/greedy_packing.h"
#include "policy/arbiter/neighbourhood_search.h"
#include "policy/arbiter/other_solves_start.h"
#include "policy/arbiter/small_search.h"

namespace themis::arbiter {
namespace {

struct Solved {
  PackingSolution solution;
  bool ran = false;    // false: the budget was spent before its turn
  bool small = false;  // small_search settled it
  double stand_in = 0;  // where it did not run: the best packing without the winner found with no search
};

// One solve: the exact small search first (small_search.h), from the better of a greedy packing and
// `known` (a feasible packing without `excluded`, or null); the solver when the search gives up.
Solved solve(const PackingProblem& problem, int excluded, const PackingChoice* known, WinnerSolver& solver,
             const SolveLimits& limits, const SolveHints& hints, std::int64_t small_search_nodes) {
  Solved out;
  out.ran = true;
  if (small_search_nodes > 0) {
    PackingChoice start = greedy_packing(problem, excluded);
    if (known && packing_value(problem, *known) > packing_value(problem, start)) start = *known;
    if (auto small = small_search(problem, excluded, start, small_search_nodes)) {
      out.small = true;
      out.solution = std::move(*small);
      return out;
    }
  }
  out.solution = solver.solve(problem, excluded, limits, hints);
  return out;
}

// The time for the next of `left` solves not yet started: `seconds` left, shared by those that run at once.
double time_share(double seconds, std::size_t left, std::size_t at_once) {
  const std::size_t together = std::max<std::size_t>(1, std::min(left, at_once));
  return std::max(1e-6, seconds * static_cast<double>(together) / static_cast<double>(left));
}

// Runs `task` on the indices taken in order from `next` until `count`, and `late` instead once the deadline passed.
template <class Task, class Late>
void take_from(std::atomic<std::size_t>& next, std::size_t count, const Deadline& deadline, Task& task, Late& late) {
  for (std::size_t k = next++; k < count; k = next++) {
    if (deadline.passed())
      late(k);
    else
      task(k);
  }
}

// Stores `value` in `kept` where `beyond(value, what it holds)`, whichever thread stores first (std::less: the least).
template <class Beyond>
void keep_beyond(std::atomic<double>& kept, double value, Beyond beyond) {
  double now = kept.load();
  while (beyond(value, now) && !kept.compare_exchange_weak(now, value)) {
    // `now` holds what another thread stored: try again while `value` is still beyond it
  }
}

// `work` on this thread and on threads − 1 helpers, back when all are done.
template <class Work>
void run_on_threads(std::size_t threads, Work& work) {
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back([&work] { work(); });
  work();
  for (std::thread& helper : helpers) helper.join();
}

}  // namespace

PartialAllocation partial_allocation(const PackingProblem& problem, WinnerSolver& solver,
                                     const AuctionLimits& limits) {
  const Deadline deadline(limits.max_seconds);
  const auto n = problem.bidders.size();
  PartialAllocation out;
  out.c.assign(n, 1.0);

  std::vector<double> pf_prices;
  std::unique_ptr<SolverMemory> pf_memory;
  // Under a time budget the PF solve gets half of it, less the share of the neighbourhood search that follows it
  // where it ends unproven (below).
  const double hood_share = limits.max_seconds / 16;
  SolveLimits first{deadline.enabled() ? limits.max_seconds / 2 - hood_share : 0, limits.max_nodes_per_solve};
  // With a budget and a second thread, the PF problem's cut bound (below) runs beside the PF solve, from a sixteenth of
  // the budget (a PF solve proven before then costs no LP) to the end of its half.
  std::optional<CutBoundBeside> cuts_beside;
  if (deadline.enabled() && limits.threads > 1) cuts_beside.emplace(problem, limits.max_seconds / 16, limits.max_seconds / 2);
  const Solved pf = solve(problem, -1, nullptr, solver, first, SolveHints{nullptr, &pf_prices, &pf_memory},
                          limits.small_search_nodes);
  out.pf = pf.solution;
  // A PF packing the limits left unproven is improved by the neighbourhood search (pairs of racks re-solved,
  // neighbourhood_search.h; under a time budget only, for its share of it, hood_share: without one it could take tens
  // of seconds at 200 bidders), then by local search with evictions (improve_packing): where the depth-first search
  // stalls, at (50, 256), they lift it by up to 1.7% (docs/performance.md, "A neighbourhood search on the unproven PF
  // packing" and "A local search on the packings the budget left unproven").
  if (!out.pf.proven_optimal) {
    PackingChoice improved = out.pf.choice;
    if (deadline.enabled())
      improved = neighbourhood_search(problem, -1, std::move(improved), Deadline(std::min(deadline.budget_left(), hood_share)));
    improved = improve_packing(problem, -1, std::move(improved));
    const double v = packing_value(problem, improved);
    if (v > out.pf.value + kImprovementTolerance) {
      out.pf.choice = std::move(improved);
      out.pf.value = v;
    }
  }
  // Where the budget leaves the PF solve unproven, its search reports its root's bound: the LP with rounds of cuts
  // (cut_bound.h) mostly bounds it far tighter, and the problems without each winner too; beside the PF solve where it
  // ran there, else for up to a sixteenth of the budget after it. These bounds only report the gap; no packing depends
  // on them.
  CutBound cuts;
  if (cuts_beside && out.pf.proven_optimal)
    cuts_beside->cancel();
  else if (std::optional<CutBound> beside = cuts_beside ? cuts_beside->finish() : std::nullopt)
    cuts = std::move(*beside);
  else if (!out.pf.proven_optimal && deadline.enabled() && !deadline.passed())
    cuts = cut_bound(problem, Deadline(std::min(deadline.budget_left(), limits.max_seconds / 16)));
  if (!out.pf.proven_optimal && std::isfinite(cuts.bound)) {
    out.pf.bound = std::max(out.pf.value, std::min(out.pf.bound, cuts.bound));
    out.pf.proven_optimal = out.pf.value >= out.pf.bound - kImprovementTolerance;
  }
  out.nodes = out.pf.nodes;
  ++out.solves;
  out.small_searches += pf.small ? 1 : 0;
  out.gap = out.pf.gap();
  out.proven_optimal = out.pf.proven_optimal;
  const double total = out.pf.value;
  out.value_without.assign(n, total);

  // A bound on W*_{-i} for a solve the budget skipped or stopped: W*_{-i} <= W* <= the PF bound; the Lagrangian bound at
  // the PF solve's prices without i's term; and the PF solve's own bound without i where it has one (the rack
  // decomposition's less i's price: at (200, 1024) 0.2-2% below the PF bound, docs/performance.md, "Bounds without a
  // winner from the rack decomposition").
  std::vector<double> lagrangian_without;  // at the PF solve's prices, computed once for every winner that needs it
  const auto pf_bound_without = [&](std::size_t i) {
    if (lagrangian_without.empty()) lagrangian_without = lagrangian_bounds_without(problem, pf_prices);
    double bound = std::min(out.pf.bound, lagrangian_without[i]);
    if (i < out.pf.bound_without.size()) bound = std::min(bound, out.pf.bound_without[i]);
    return std::min(bound, cuts.bound_without(static_cast<int>(i)));
  };

  std::vector<int> winners;
  for (std::size_t i = 0; i < n; ++i)
    if (out.pf.choice[i] >= 0) winners.push_back(static_cast<int>(i));

  // After a PF solve the solver made, every solve without a winner starts from a copy of its own of what that
  // solve left (the solver's prices and memory), so those solves run side by side (a reentrant solver). Each
  // proves its optimum, or stops at the budget, whatever packing it starts from: the outcome does not depend on how
  // many threads there are (a start taken from another solve's end moves only its node count). After a PF
  // solve the small searches settled, the solves are small too (starting a thread would cost more) and run one
  // after the other, each passing its prices and memory on to the next, on one thread whatever the setting.
  const bool side_by_side = !pf.small;
  // The PF packing less winner i, feasible without i, then each bidder moved to its best row that fits what is left
  // (upgrade_packing): a bidder that can use i's units lifts the start of the solve without i, and the stand-in where
  // the budget left no time for that solve (docs/arbiter.md, "Partial allocation").
  const auto pf_less = [&](std::size_t i) {
    PackingChoice choice = out.pf.choice;
    choice[i] = -1;
    return upgrade_packing(problem, static_cast<int>(i), std::move(choice));
  };
  // Solves whose incumbent (that start) nothing can beat are settled without a search where the
  // PF solve was large enough for a search to cost more than the check's LPs (displacement.h).
  std::optional<DisplacementChecker> displacement;
  if (out.pf.proven_optimal && limits.displacement_from_nodes >= 0 && out.pf.nodes >= limits.displacement_from_nodes)
    displacement.emplace(problem, out.pf, deadline.budget_left());
  std::atomic<int> settled{0};
  std::vector<Solved> without(winners.size());
  // The packings the searched solves without a winner ended with, each published once written, for the starts of the
  // solves after them (other_solves_start.h). Not where a node cap may stop a solve: a capped solve's outcome would
  // then depend on which solves had ended before it, that is on the threads' timing.
  const bool share_ends = side_by_side && limits.max_nodes_per_solve <= 0;
  std::vector<PackingChoice> ended(share_ends ? winners.size() : 0);
  std::vector<std::atomic<bool>> ended_ready(share_ends ? winners.size() : 0);
  // Under a time budget, the prices of each solve the budget stopped, for a second round (below), and its memory where
  // it searched at least kKeepMemoryFromNodes nodes: at (200, 1024) a hundred solves stopped after a few hundred nodes
  // each, and keeping their memories (each with its copy of the LP) slowed the solves after them by the page faults.
  constexpr std::int64_t kKeepMemoryFromNodes = 2000;
  struct Stopped {
    std::vector<double> prices;
    std::unique_ptr<SolverMemory> memory;
  };
  std::vector<Stopped> stopped(deadline.enabled() && side_by_side ? winners.size() : 0);
  std::vector<double> chained_prices;
  std::unique_ptr<SolverMemory> chained_memory;
  const std::size_t most_threads =
      solver.reentrant() && side_by_side ? std::min<std::size_t>(static_cast<std::size_t>(std::max(1, limits.threads)), winners.size()) : 1;
  // A winner whose turn comes after the budget is spent gets a stand-in for W*_{-i} without a solver call: the better of
  // the PF packing less i, refilled, and a greedy packing without i. At 200 bidders a hundred winners may wait for
  // one, 0.2 ms each, so the threads of the solves take them, and the greedy's orders are sorted once for all of them
  // (docs/performance.md, "Time budgets that hold"). So does a winner whose share of the time left is less than the
  // least any solve so far overran its own: at 200 bidders a solve's start (its refill improved, the PF memory and LP
  // copied, its root's steps) took 5-13 ms, and solves given a fraction of a millisecond each spent it all past the
  // deadline for no node that mattered.
  std::once_flag greedy_sorted;
  std::optional<GreedyOrders> greedy_orders;
  const auto greedy_without = [&](std::size_t i) {
    std::call_once(greedy_sorted, [&] { greedy_orders.emplace(problem); });
    return greedy_orders->packing(static_cast<int>(i));
  };
  std::atomic<double> stand_ins_seconds{0};  // the stand-ins' time so far, and how many
  std::atomic<int> stand_ins{0};
  auto stand_in = [&](std::size_t k) {
    const double left_before = deadline.remaining();
    const auto i = static_cast<std::size_t>(winners[k]);
    without[k].stand_in = std::max(packing_value(problem, greedy_without(i)), packing_value(problem, pf_less(i)));
    if (deadline.enabled()) {
      stand_ins_seconds.fetch_add(left_before - deadline.remaining());
      ++stand_ins;
    }
  };
  // Under a budget the winners still to take keep back the time their stand-ins would take, so that the solves leave it
  // to them: the mean stand-in so far, on every thread; the last winner's is made first, to measure one.
  const auto stand_ins_after = [&](std::size_t k, std::size_t threads) {
    const int made = stand_ins.load();
    if (made == 0) return 0.0;
    return stand_ins_seconds.load() / made * static_cast<double>(winners.size() - k - 1) / static_cast<double>(threads);
  };
  if (deadline.enabled() && side_by_side && winners.size() > 1) stand_in(winners.size() - 1);
  std::atomic<double> least_overrun{std::numeric_limits<double>::infinity()};  // +inf: no solve has ended yet
  // The solves aim to end before the deadline by what the turns in flight at their end may take past it and what follows
  // them, each measured in this auction: the most a solve has overrun its share so far, a stand-in (none is interrupted;
  // the first, which sorts the greedy's orders, is the longest) and releasing the solves' memory after the c_i below,
  // which took about as long as that stand-in at 200 bidders (0.5-0.9 ms against 0.5-0.9 ms on 0.1 s, when the turns
  // aimed at the deadline itself and the auctions ended 1-5 ms past it: docs/performance.md, "Budgets that end on time").
  std::atomic<double> most_overrun{0};
  const double first_stand_in = stand_ins_seconds.load();
  const auto end_reserve = [&] { return most_overrun.load() + 2 * first_stand_in; };
  // The solves are taken in order from one counter by whichever thread is free, so a long solve does not hold
  // up the ones behind it. Helpers start once the solves have searched `threads_from_nodes` nodes (the PF
  // solve's, then those the calling thread finished one by one), so auctions that stay small never pay for a
  // thread; that point depends on node counts alone, so the threads used are the same from run to run. Under a budget
  // they also start once it is spent, for the stand-ins.
  std::atomic<std::size_t> next{0};
  std::size_t running = 1;  // set before the helpers start, read by them after
  auto solve_next = [&](std::size_t k) {
    SolveLimits each{0, limits.max_nodes_per_solve};
    double share = 0;
    if (deadline.enabled()) {
      const double for_solves = deadline.remaining() - end_reserve() - stand_ins_after(k, running);
      share = time_share(for_solves, winners.size() - k, running);
      const double least = least_overrun.load();
      if (for_solves <= 0 || (std::isfinite(least) && share < least)) {
        stand_in(k);
        return;
      }
    }
    const double left_at_start = deadline.remaining();
    const auto i = static_cast<std::size_t>(winners[k]);
    PackingChoice without_i = pf_less(i);
    std::vector<double> own_prices;
    std::unique_ptr<SolverMemory> own_memory;
    if (side_by_side) {
      own_prices = pf_prices;
      if (pf_memory) own_memory = pf_memory->clone();
    }
    std::vector<double>& prices = side_by_side ? own_prices : chained_prices;
    std::unique_ptr<SolverMemory>& memory = side_by_side ? own_memory : chained_memory;
    // The solve's share counts from its turn: what its start takes (the refill, the memory's copy, the local search
    // below; at 200 bidders 1-7 ms) is spent.
    const auto share_unspent = [&] { return share - (left_at_start - deadline.remaining()); };
    const auto share_left = [&] { return std::max(1e-6, share_unspent()); };
    if (deadline.enabled()) each.max_seconds = share_left();
    if (displacement && displacement->check(static_cast<int>(i), packing_value(problem, without_i), each.max_seconds).settled) {
      without[k].ran = true;
      without[k].solution.choice = std::move(without_i);
      without[k].solution.value = packing_value(problem, without[k].solution.choice);
      without[k].solution.bound = without[k].solution.value;
      without[k].solution.proven_optimal = true;
      ++settled;
      return;
    }
    // A solve that is to search starts from the refill improved by the local search with evictions, in large auctions
    // (AuctionLimits::improved_starts_from_nodes), or from a packing another solve without a winner ended with where
    // that is better (other_solves_start.h).
    if (side_by_side && (!out.pf.proven_optimal || out.pf.nodes >= limits.improved_starts_from_nodes)) {
      // Their local searches stop where the share does.
      const auto share_deadline = [&] { return Deadline(deadline.enabled() ? share_left() : 0); };
      without_i = improve_packing(problem, static_cast<int>(i), std::move(without_i), share_deadline());
      if (share_ends && (!deadline.enabled() || share_unspent() > 0)) {
        std::vector<OtherSolve> others;
        for (std::size_t other = 0; other < winners.size(); ++other)
          if (ended_ready[other].load(std::memory_order_acquire)) others.push_back({winners[other], &ended[other]});
        if (std::optional<PackingChoice> better = start_from_other_solves(
                problem, static_cast<int>(i), others, packing_value(problem, without_i), share_deadline()))
          without_i = std::move(*better);
      }
      if (deadline.enabled()) each.max_seconds = share_left();
    }
    // Where the small searches gave up on the PF solve, they would give up on the solves without one of its
    // winners as well, after as many nodes each: those go to the solver at once.
    if (deadline.enabled() && share_unspent() <= 0) {
      // Its start took its share (at 200 bidders the refill improved takes up to 2 ms): the start stands, or the greedy
      // packing where better (a solve that ran is worth at least its stand-in), unproven; its gap is bounded by the PF
      // solve's bounds without i (pf_bound_without).
      PackingChoice greedy = greedy_without(i);
      if (packing_value(problem, greedy) > packing_value(problem, without_i)) without_i = std::move(greedy);
      without[k].ran = true;
      without[k].solution.value = packing_value(problem, without_i);
      without[k].solution.choice = std::move(without_i);
      without[k].solution.bound = std::numeric_limits<double>::infinity();
    } else {
      without[k] = solve(problem, static_cast<int>(i), &without_i, solver, each, SolveHints{&without_i, &prices, &memory},
                         side_by_side ? 0 : limits.small_search_nodes);
    }
    if (share_ends && without[k].solution.choice.size() == problem.bidders.size()) {
      ended[k] = without[k].solution.choice;
      ended_ready[k].store(true, std::memory_order_release);
    }
    if (deadline.enabled()) {
      const double overrun = std::max(0.0, -share_unspent());
      keep_beyond(least_overrun, overrun, std::less<>());
      keep_beyond(most_overrun, overrun, std::greater<>());
    }
    if (k < stopped.size() && !without[k].solution.proven_optimal) {
      stopped[k].prices = std::move(own_prices);
      if (without[k].solution.nodes >= kKeepMemoryFromNodes) stopped[k].memory = std::move(own_memory);
    }
  };
  auto take_solves = [&] { take_from(next, winners.size(), deadline, solve_next, stand_in); };
  std::int64_t searched = out.pf.nodes;
  for (std::size_t k = next++; k < winners.size(); k = next++) {
    if (most_threads > 1 && (searched >= limits.threads_from_nodes || deadline.passed())) {
      --next;  // k is not started: the helpers and this thread take it and the rest from the counter
      running = most_threads;
      run_on_threads(most_threads, take_solves);
      break;
    }
    if (deadline.passed()) {
      stand_in(k);
      continue;
    }
    solve_next(k);
    if (without[k].ran) searched += without[k].solution.nodes;
  }
  out.threads = static_cast<int>(running);
  out.settled_without_search = settled;

  // A second round for the solves the budget stopped, where every solve has had its turn and time is left: each solve's
  // share was the time left over the solves not yet started, so a hard solve early in the order stops while the easy
  // ones after it return most of theirs. Each goes on from its packing with its own prices and, where kept (above), its
  // own memory (the bounds its subtrees proved still hold; else a fresh copy of the PF solve's), on the threads of the
  // first round, sharing the time left the same way (on an elastic (20, 64) auction two solves of 364,000 and 314,000
  // nodes stopped at 192,000 and 234,000 with 0.65 s of the 2 s left: docs/performance.md, "A second round for the
  // solves the budget stopped").
  std::vector<std::size_t> again;
  const bool every_turn = std::all_of(without.begin(), without.end(), [](const Solved& solved) { return solved.ran; });
  for (std::size_t k = 0; k < stopped.size() && every_turn; ++k)
    if (!without[k].solution.proven_optimal) again.push_back(k);
  if (!again.empty() && deadline.remaining() > end_reserve()) {
    const std::size_t threads = std::min(most_threads, again.size());
    std::atomic<std::size_t> next_again{0};
    auto solve_again = [&](std::size_t a) {
      const std::size_t k = again[a];
      // A solve whose share is less than the most a turn of the first round overran keeps its first round's result: at
      // 200 bidders the solves the budget stopped got shares of 0.3 ms here, and each took 0.4-1.4 ms for a node or
      // none. Its share counts from here, the copy of the PF solve's memory included, and its overrun counts as well.
      // Each turn releases the solve's memory, which nothing reads after it, within its share: the memories kept for
      // this round took a millisecond to release after it at 20 bidders on 0.1 s.
      const double for_solves = deadline.remaining() - end_reserve();
      const double share = time_share(for_solves, again.size() - a, threads);
      if (for_solves <= 0 || share < most_overrun.load()) {
        stopped[k] = Stopped{};
        return;
      }
      const double left_at_start = deadline.remaining();
      PackingChoice start = without[k].solution.choice;
      if (!stopped[k].memory && pf_memory) stopped[k].memory = pf_memory->clone();
      const SolveLimits each{std::max(1e-6, share - (left_at_start - deadline.remaining())), limits.max_nodes_per_solve};
      PackingSolution more = solver.solve(problem, winners[k], each, SolveHints{&start, &stopped[k].prices, &stopped[k].memory});
      stopped[k] = Stopped{};
      keep_beyond(most_overrun, std::max(0.0, left_at_start - deadline.remaining() - share), std::greater<>());
      const PackingSolution& before = without[k].solution;
      more.nodes += before.nodes;
      more.bound = std::min(more.bound, before.bound);
      if (before.value > more.value) {
        more.choice = before.choice;
        more.value = before.value;
      }
      more.proven_optimal = more.proven_optimal || more.value >= more.bound - kImprovementTolerance;
      without[k].solution = std::move(more);
    };
    auto keep_first = [&](std::size_t a) { stopped[again[a]] = Stopped{}; };  // so does one the deadline stops
    auto take_again = [&] { take_from(next_again, again.size(), deadline, solve_again, keep_first); };
    run_on_threads(threads, take_again);
    out.threads = std::max(out.threads, static_cast<int>(threads));
  }

  for (std::size_t k = 0; k < winners.size(); ++k) {
    const auto i = static_cast<std::size_t>(winners[k]);
    const double gain_i = problem.bidders[i].rows[static_cast<std::size_t>(out.pf.choice[i])].gain;
    const double others_at_pf = total - gain_i;
    if (!without[k].ran) {
      // Out of time: the stand-in (above) for W*_{-i}, a lower bound, so c_i is at most overstated. The gap is bounded
      // by the PF solve's bounds without i (pf_bound_without) or, if lower, each bidder's best row.
      const double best_without = std::max(without[k].stand_in, others_at_pf);
      double trivial_bound = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (j != i && !problem.bidders[j].rows.empty()) trivial_bound += problem.bidders[j].rows.front().gain;
      const double bound = std::min(trivial_bound, pf_bound_without(i));
      if (bound > best_without) out.gap = std::max(out.gap, (bound - best_without) / bound);
      out.value_without[i] = best_without;
      out.c[i] = std::min(1.0, std::exp(others_at_pf - best_without));
      out.proven_optimal = false;
      continue;
    }
    const PackingSolution& solved = without[k].solution;
    ++out.solves;
    out.nodes += solved.nodes;
    out.small_searches += without[k].small ? 1 : 0;
    out.proven_optimal = out.proven_optimal && solved.proven_optimal;
    const double best_without = std::max(solved.value, others_at_pf);
    if (!solved.proven_optimal) {  // the PF solve's bounds are often tighter than the solve's own
      const double bound = std::min(solved.bound, pf_bound_without(i));
      if (bound > best_without) out.gap = std::max(out.gap, (bound - best_without) / bound);
    }
    out.value_without[i] = best_without;
    out.c[i] = std::min(1.0, std::exp(others_at_pf - best_without));
  }
  return out;
}

}  // namespace themis::arbiter
