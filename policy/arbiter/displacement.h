#pragma once
// Settling the solves without a winner from the proven PF solve, before any search (docs/arbiter.md, "Solves without
// a winner that nothing can improve").
//
// Let the PF solve prove W* with winner i on row R. A packing Q without i that leaves room for R (Q and R together
// within every capacity) is worth at most W* − gain(R): with R it would be a packing with everybody. So a packing
// without i that beats the PF packing less i must *displace* R: for some item g of R, Q takes more than
// capacity(g) − units_R(g) of it. One LP per item of R bounds the packings that do (the relaxation with that least
// use of g as one more constraint). Where every such LP is infeasible or its bound does not beat the incumbent, the
// incumbent is optimal without i and no search is needed.
//
// The LP (packing_lp.h: the dense dual simplex up to 256 rows, else CLP) only proposes prices: each bound is the
// Lagrangian bound of the restricted problem at prices λ ≥ 0 for the capacities and μ ≥ 0 for the least use, computed
// here; an infeasible LP counts only where the prices of the LP that maximises the others' use of g bound that use
// below the least. So, as in the solvers, the LP's tolerances never decide.
#include <memory>
#include <mutex>
#include <vector>

#include "policy/arbiter/packing_lp.h"
#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

struct DisplacementCheck {
  bool settled = false;  // no packing without the winner beats the incumbent by more than kImprovementTolerance
  int lps = 0;           // LP solves it took
};

class DisplacementChecker {
 public:
  // `pf`: the PF solve of `problem` (both must outlive the checker). Checks need it proven optimal; else none settles.
  // Solves the relaxation with everybody within `max_seconds` (<= 0: no limit; past it, no check settles).
  DisplacementChecker(const PackingProblem& problem, const PackingSolution& pf, double max_seconds = 0);
  ~DisplacementChecker();
  // Whether the problem without winner `excluded` has no packing worth more than `incumbent` (the value of a packing
  // without it, at least the PF packing less it), its LP solves within `max_seconds` in all (<= 0: no limit; past
  // it, not settled). May run on several threads at once.
  DisplacementCheck check(int excluded, double incumbent, double max_seconds = 0) const;

 private:
  const PackingProblem& problem_;
  const PackingSolution& pf_;
  std::vector<const PackingRow*> rows_;  // the LP's columns: every bidder's rows with gain > 0, bidder after bidder
  std::vector<int> bidder_;              // per column
  std::unique_ptr<PackingLp> lp_;        // relaxation with everybody, solved: each check starts from a copy
  mutable std::mutex copying_;           // CLP (above 256 rows) does not promise that copying a model only reads it
};

}  // namespace themis::arbiter
