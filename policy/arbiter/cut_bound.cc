#include "policy/arbiter/cut_bound.h"

#include <ClpEventHandler.hpp>
#include <CglGomory.hpp>
#include <CglTwomir.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#include <OsiCuts.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "policy/arbiter/coin_matrix.h"

namespace themis::arbiter {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The bound at the LP's row prices (cut_bound.h), and in `own` each bidder's part of it; `first_column`: per bidder its
// first column, and the end. +inf where the LP is not at an optimum.
double bound_at_duals(const OsiClpSolverInterface& solver, const std::vector<int>& first_column, std::vector<double>& own) {
  if (!solver.isProvenOptimal()) return kInfinity;
  const int rows = solver.getNumRows();
  const double* price = solver.getRowPrice();  // the minimisation's: −y
  const double* lower = solver.getRowLower();
  const double* upper = solver.getRowUpper();
  const double infinity = solver.getInfinity();
  std::vector<double> y(static_cast<std::size_t>(rows));
  double bound = 0;
  for (int r = 0; r < rows; ++r) {
    double v = -price[r];
    if (v > 0 && upper[r] >= infinity) v = 0;
    if (v < 0 && lower[r] <= -infinity) v = 0;
    y[static_cast<std::size_t>(r)] = v;
    bound += v > 0 ? v * upper[r] : v * lower[r];
  }
  const CoinPackedMatrix* matrix = solver.getMatrixByCol();
  const double* cost = solver.getObjCoefficients();  // −gain
  const double* column_upper = solver.getColUpper();
  const std::size_t bidders = first_column.size() - 1;
  own.assign(bidders, 0.0);
  for (std::size_t b = 0; b < bidders; ++b) {
    const double v = y[b];  // the bidder's row: between 0 and 1
    own[b] = v > 0 ? v * upper[b] : v * lower[b];
    for (int j = first_column[b]; j < first_column[b + 1]; ++j) {
      const CoinShallowPackedVector column = matrix->getVector(j);
      double reduced = -cost[j];
      for (int e = 0; e < column.getNumElements(); ++e)
        reduced -= y[static_cast<std::size_t>(column.getIndices()[e])] * column.getElements()[e];
      if (reduced > 0) {
        bound += reduced * column_upper[j];
        own[b] += reduced * column_upper[j];
      }
    }
  }
  return bound;
}

// Stops CLP at the end of an iteration once the flag is set.
class StopWhenSet : public ClpEventHandler {
 public:
  explicit StopWhenSet(const std::atomic<bool>* stop) : stop_(stop) {}
  int event(Event which) override {
    return which == endOfIteration && stop_->load(std::memory_order_relaxed) ? 0 : -1;
  }
  ClpEventHandler* clone() const override { return new StopWhenSet(*this); }

 private:
  const std::atomic<bool>* stop_;
};

}  // namespace

CutBound cut_bound(const PackingProblem& problem, const Deadline& deadline, int rounds, const std::atomic<bool>* stop) {
  CutBound out;
  const auto stopped = [stop] { return stop != nullptr && stop->load(std::memory_order_relaxed); };
  if (stopped()) return out;
  const int bidders = static_cast<int>(problem.bidders.size());
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  if (stop != nullptr) {
    const StopWhenSet handler(stop);
    solver.getModelPtr()->passInEventHandler(&handler);  // the model keeps a clone
  }
  const std::vector<PackingColumn> columns = load_packing_lp(solver, problem, [](int, int) { return true; });
  if (columns.empty()) {
    out.bound = 0;
    return out;
  }
  std::vector<int> first_column(static_cast<std::size_t>(bidders) + 1, 0);  // per bidder its first column, and the end
  for (const PackingColumn& c : columns) ++first_column[static_cast<std::size_t>(c.bidder) + 1];
  for (std::size_t b = 1; b < first_column.size(); ++b) first_column[b] += first_column[b - 1];
  // CLP stops at the deadline too (its limit counts from each solve's start): at 200 bidders one solve can take longer
  // than the whole share.
  auto time_left = [&] { solver.getModelPtr()->setMaximumWallSeconds(deadline.enabled() ? deadline.budget_left() : -1); };
  time_left();
  // Without presolve: CLP's presolve reads no clock and no stop, and took 125 ms of a large LP before its first iteration.
  solver.setHintParam(OsiDoPresolveInInitial, false, OsiHintDo);
  if (stopped()) return out;
  solver.initialSolve();
  out.bound = bound_at_duals(solver, first_column, out.own);
  CglGomory gomory;
  CglTwomir twomir;
  std::vector<double> own;
  for (int round = 0; round < rounds && solver.isProvenOptimal() && !deadline.passed() && !stopped(); ++round) {
    OsiCuts cuts;
    gomory.generateCuts(solver, cuts);
    twomir.generateCuts(solver, cuts);
    if (cuts.sizeRowCuts() == 0) break;
    out.cuts += cuts.sizeRowCuts();
    solver.applyCuts(cuts);
    time_left();
    solver.resolve();
    if (const double bound = bound_at_duals(solver, first_column, own); bound < out.bound) {
      out.bound = bound;
      out.own.swap(own);
    }
  }
  return out;
}

double CutBound::bound_without(int bidder) const {
  const auto b = static_cast<std::size_t>(bidder);
  if (b >= own.size()) return bound;
  return std::min(bound, bound - own[b]);
}

}  // namespace themis::arbiter
