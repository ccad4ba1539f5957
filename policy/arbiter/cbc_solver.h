#pragma once
// Winner determination with the CBC MIP solver (COIN-OR): one binary variable per row, maximise
// Σ gain·x subject to Σ x <= 1 per bidder and per GPU. The warm start is passed as CBC's first
// incumbent; at a time or node limit CBC's best solution and best possible value are returned.
#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {

class CbcSolver final : public WinnerSolver {
 public:
  std::string_view name() const override { return "cbc"; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits& limits,
                        const SolveHints& hints) override;
};

}  // namespace themis::arbiter
