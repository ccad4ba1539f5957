#include "policy/arbiter/other_solves_start.h"

#include <vector>

#include "policy/arbiter/greedy_packing.h"
#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {

std::optional<PackingChoice> start_from_other_solves(const PackingProblem& problem, int excluded,
                                                     std::span<const OtherSolve> others, double floor,
                                                     const Deadline& deadline) {
  const auto bidders = problem.bidders.size();
  std::vector<int> left(static_cast<std::size_t>(problem.item_count));
  double best = floor + kImprovementTolerance;
  const OtherSolve* pick = nullptr;
  int pick_row = -1;
  for (const OtherSolve& other : others) {
    const int j = other.excluded;
    if (other.choice == nullptr || other.choice->size() != bidders || j == excluded || j < 0 ||
        static_cast<std::size_t>(j) >= bidders)
      continue;
    const PackingChoice& choice = *other.choice;
    for (int item = 0; item < problem.item_count; ++item) left[static_cast<std::size_t>(item)] = problem.capacity(item);
    double value = 0;
    for (std::size_t b = 0; b < bidders; ++b) {
      if (choice[b] < 0 || static_cast<int>(b) == excluded) continue;
      const PackingRow& row = problem.bidders[b].rows[static_cast<std::size_t>(choice[b])];
      value += row.gain;
      for (int item : row.items) --left[static_cast<std::size_t>(item)];
    }
    // j back on its best row that fits what the others leave.
    const auto& rows = problem.bidders[static_cast<std::size_t>(j)].rows;
    const int back_row = best_row_that_fits(rows, left, 0.0, 0.0);
    const double back = back_row < 0 ? 0.0 : rows[static_cast<std::size_t>(back_row)].gain;
    if (value + back > best) {
      best = value + back;
      pick = &other;
      pick_row = back_row;
    }
  }
  if (pick == nullptr) return std::nullopt;
  PackingChoice start = *pick->choice;
  if (excluded >= 0 && static_cast<std::size_t>(excluded) < bidders) start[static_cast<std::size_t>(excluded)] = -1;
  start[static_cast<std::size_t>(pick->excluded)] = pick_row;
  start = improve_packing(problem, excluded, std::move(start), deadline);
  if (!(packing_value(problem, start) > floor + kImprovementTolerance)) return std::nullopt;
  return start;
}

}  // namespace themis::arbiter
