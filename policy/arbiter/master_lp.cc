#include "policy/arbiter/master_lp.h"

#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <vector>

#include "policy/arbiter/dense_inverse.h"

namespace themis::arbiter {
namespace {

constexpr double kDualTolerance = 1e-9;     // a reduced gain beyond this enters
constexpr double kPivotTolerance = 1e-7;    // an entry of B⁻¹·a within this of 0 is no pivot
constexpr double kPrimalTolerance = 1e-9;   // how far a basic value may stray past its bound in the ratio test
constexpr double kResidualLimit = 1e-9;     // basic values that miss b by more are recomputed (then B⁻¹ rebuilt)
constexpr int kCheckEvery = 100;            // pivots between checks of that
constexpr int kDegenerateRun = 50;          // pivots that move nothing before Bland's rule, which cannot cycle
constexpr double kSingular = 1e-11;  // a pivot this small in rebuilding B⁻¹ makes the basis singular
constexpr double kPerturbation = 1e-7;  // the right-hand sides are lowered by 1–2 times this
constexpr double kNoMove = 1e-9;  // a step this short moves nothing
constexpr double kSnap = 1e-11;   // a basic value this close to a bound is at it

}  // namespace

struct MasterLp::Clp {
  ClpSimplex lp;
  bool fixed = false;  // a column was fixed since the last solve: CLP's dual simplex from the last basis
};

MasterLp::~MasterLp() = default;

MasterLp::MasterLp(std::vector<double> rhs) : m_(static_cast<int>(rhs.size())), b_(std::move(rhs)) {
  y_.assign(static_cast<std::size_t>(m_), 0.0);
  if (m_ > kMaxDenseRows) {
    clp_ = std::make_unique<Clp>();
    ClpSimplex& lp = clp_->lp;
    lp.setLogLevel(0);
    const std::vector<double> row_lower(static_cast<std::size_t>(m_), -COIN_DBL_MAX);
    const CoinPackedMatrix empty(true, m_, 0, 0, nullptr, nullptr, nullptr, nullptr);
    lp.loadProblem(empty, nullptr, nullptr, nullptr, row_lower.data(), b_.data());
    lp.setOptimizationDirection(-1);  // maximise
    lp.scaling(0);
    return;
  }
  // The master is highly degenerate (most rows at their bound in most bases): without this, nine pivots in ten moved
  // nothing and Bland's rule had to end cycles. Each row's right-hand side (of 1 or more) is lowered by a different
  // amount of 1–2 kPerturbation (deterministic, so that runs repeat). Lowered, not raised: a row that columns at 1
  // fill stays binding and keeps its dual, which prices that row's bidder or items for the caller; raised, such rows
  // had slack and a dual of 0, and the elastic (20, 64) auctions searched 5.2 million nodes without a budget, against
  // 2.2 million lowered (docs/performance.md, "The racks' master LP without CLP").
  for (std::size_t i = 0; i < b_.size(); ++i) {
    double f = static_cast<double>(i) * 0.6180339887498949;
    f -= std::floor(f);
    if (b_[i] >= 1) b_[i] -= kPerturbation * (1 + f);
  }
  at_.assign(static_cast<std::size_t>(m_), At::basic);
  slack_basis();
}

void MasterLp::slack_basis() {
  const auto m = static_cast<std::size_t>(m_);
  head_.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    head_[i] = static_cast<int>(i);
    at_[i] = At::basic;
  }
  for (std::size_t j = m; j < at_.size(); ++j)
    if (at_[j] != At::fixed) at_[j] = At::lower;
  binv_.assign(m * m, 0.0);
  for (std::size_t i = 0; i < m; ++i) binv_[i * m + i] = 1.0;
  xb_ = b_;
  weight_.assign(at_.size(), 1.0);
  duals_stale_ = true;
  since_check_ = 0;
  optimal_ = false;
}

int MasterLp::add_column(double gain, std::span<const std::pair<int, double>> entries) {
  if (clp_) {
    std::vector<int> rows;
    std::vector<double> values;
    for (const auto& [r, v] : entries) {
      rows.push_back(r);
      values.push_back(v);
    }
    const CoinBigIndex starts[2] = {0, static_cast<CoinBigIndex>(rows.size())};
    const double lower = 0, upper = 1;
    clp_->lp.addColumns(1, &lower, &upper, &gain, starts, rows.data(), values.data());
    cost_.push_back(gain);
    optimal_ = false;
    return n_++;
  }
  for (const auto& [r, v] : entries) {
    row_.push_back(r);
    value_.push_back(v);
  }
  start_.push_back(static_cast<int>(row_.size()));
  cost_.push_back(gain);
  at_.push_back(At::lower);
  weight_.push_back(1.0);
  optimal_ = false;
  return n_++;
}

bool MasterLp::fix_at_one(int c) {
  if (clp_) {
    clp_->lp.setColumnLower(c, 1.0);
    clp_->fixed = true;
    optimal_ = false;
    return true;
  }
  const auto begin = static_cast<std::size_t>(start_[static_cast<std::size_t>(c)]);
  const auto end = static_cast<std::size_t>(start_[static_cast<std::size_t>(c) + 1]);
  for (std::size_t e = begin; e < end; ++e)  // a row may fall below 0 by its perturbation, not more
    if (b_[static_cast<std::size_t>(row_[e])] - value_[e] < -2 * kPerturbation - kPrimalTolerance) return false;
  for (std::size_t e = begin; e < end; ++e) {
    double& b = b_[static_cast<std::size_t>(row_[e])];
    b = std::max(0.0, b - value_[e]);
  }
  at_[static_cast<std::size_t>(m_ + c)] = At::fixed;
  slack_basis();
  return true;
}

double MasterLp::dot(const std::vector<double>& v, int j) const {
  if (j < m_) return v[static_cast<std::size_t>(j)];
  const auto c = static_cast<std::size_t>(j - m_);
  double sum = 0;
  for (auto e = static_cast<std::size_t>(start_[c]); e < static_cast<std::size_t>(start_[c + 1]); ++e)
    sum += v[static_cast<std::size_t>(row_[e])] * value_[e];
  return sum;
}

void MasterLp::add_to(std::vector<double>& v, int j, double amount) const {
  if (j < m_) {
    v[static_cast<std::size_t>(j)] += amount;
    return;
  }
  const auto c = static_cast<std::size_t>(j - m_);
  for (auto e = static_cast<std::size_t>(start_[c]); e < static_cast<std::size_t>(start_[c + 1]); ++e)
    v[static_cast<std::size_t>(row_[e])] += amount * value_[e];
}

void MasterLp::direction(int j, std::vector<double>& alpha) const {
  const auto m = static_cast<std::size_t>(m_);
  if (j < m_) {
    std::copy_n(binv_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(j) * m), m, alpha.begin());
    return;
  }
  std::fill(alpha.begin(), alpha.end(), 0.0);
  const auto c = static_cast<std::size_t>(j - m_);
  for (auto e = static_cast<std::size_t>(start_[c]); e < static_cast<std::size_t>(start_[c + 1]); ++e) {
    const double v = value_[e];
    const double* column = &binv_[static_cast<std::size_t>(row_[e]) * m];
    for (std::size_t i = 0; i < m; ++i) alpha[i] += v * column[i];
  }
}

void MasterLp::compute_duals() {
  const auto m = static_cast<std::size_t>(m_);
  basic_cost_.resize(m);
  for (std::size_t i = 0; i < m; ++i) basic_cost_[i] = cost(head_[i]);
  for (std::size_t r = 0; r < m; ++r) {
    const double* column = &binv_[r * m];
    double sum = 0;
    for (std::size_t i = 0; i < m; ++i) sum += basic_cost_[i] * column[i];
    y_[r] = sum;
  }
}

void MasterLp::compute_basic_values() {
  const auto m = static_cast<std::size_t>(m_);
  std::vector<double> rest = b_;  // b less the columns at their upper bound
  for (int c = 0; c < n_; ++c)
    if (at_[static_cast<std::size_t>(m_ + c)] == At::upper) add_to(rest, m_ + c, -1.0);
  std::fill(xb_.begin(), xb_.end(), 0.0);
  for (std::size_t r = 0; r < m; ++r) {
    if (rest[r] == 0) continue;
    const double* column = &binv_[r * m];
    for (std::size_t i = 0; i < m; ++i) xb_[i] += rest[r] * column[i];
  }
}

double MasterLp::residual() const {
  std::vector<double> lhs(static_cast<std::size_t>(m_), 0.0);
  for (std::size_t i = 0; i < head_.size(); ++i) add_to(lhs, head_[i], xb_[i]);
  for (int c = 0; c < n_; ++c)
    if (at_[static_cast<std::size_t>(m_ + c)] == At::upper) add_to(lhs, m_ + c, 1.0);
  double worst = 0;
  for (std::size_t r = 0; r < lhs.size(); ++r) worst = std::max(worst, std::abs(lhs[r] - b_[r]));
  return worst;
}

bool MasterLp::refactor() {
  const auto m = static_cast<std::size_t>(m_);
  // B row-major (entry (row, position)); its inverse comes row-major, B⁻¹ is kept column-major.
  const std::optional<std::vector<double>> inverse =
      dense_inverse(basis_matrix(m_, head_, start_, row_, value_), m, kSingular);
  if (!inverse) return false;
  // Row i of the result is B⁻¹'s row for basis position i.
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t r = 0; r < m; ++r) binv_[r * m + i] = (*inverse)[i * m + r];
  compute_basic_values();
  duals_stale_ = true;
  since_check_ = 0;
  return true;
}

void MasterLp::pivot(int p, const std::vector<double>& alpha) {
  const auto m = static_cast<std::size_t>(m_);
  const auto at = static_cast<std::size_t>(p);
  nonzero_.clear();
  for (std::size_t i = 0; i < m; ++i)
    if (i != at && alpha[i] != 0) nonzero_.push_back(i);
  const double ap = alpha[at];
  for (std::size_t r = 0; r < m; ++r) {
    double* column = &binv_[r * m];
    if (column[at] == 0) continue;
    const double v = column[at] / ap;
    for (std::size_t i : nonzero_) column[i] -= alpha[i] * v;
    column[at] = v;
  }
}

MasterLp::Status MasterLp::solve_with_clp(const Deadline& deadline) {
  ClpSimplex& lp = clp_->lp;
  const double left = deadline.budget_left();
  lp.setMaximumWallSeconds(left > 0 ? left : -1);
  if (clp_->fixed)
    lp.dual();
  else
    lp.primal();
  clp_->fixed = false;
  optimal_ = lp.isProvenOptimal();
  x_.assign(lp.primalColumnSolution(), lp.primalColumnSolution() + n_);
  y_.assign(lp.dualRowSolution(), lp.dualRowSolution() + m_);
  if (optimal_) return Status::optimal;
  return deadline.passed() ? Status::stopped : Status::failed;
}

MasterLp::Status MasterLp::solve(const Deadline& deadline) {
  if (clp_) return solve_with_clp(deadline);
  const auto m = static_cast<std::size_t>(m_);
  std::vector<double> alpha(m);
  int no_move = 0;
  const std::int64_t limit = pivots_ + 50 * static_cast<std::int64_t>(m_ + n_) + 1000;
  optimal_ = false;
  duals_stale_ = true;
  for (std::int64_t step = 0;; ++step) {
    if ((step & 63) == 63 && deadline.passed()) {
      fill_x();
      return Status::stopped;
    }
    if (pivots_ > limit) return Status::failed;
    if (since_check_ >= kCheckEvery) {
      since_check_ = 0;
      // The basic values drift as the steps add up, long before B⁻¹ does: they are computed afresh first.
      if (residual() > kResidualLimit) compute_basic_values();
      if (residual() > kResidualLimit && !refactor()) return Status::failed;
    }
    if (duals_stale_) {
      compute_duals();
      duals_stale_ = false;
    }
    // The entering variable: the largest reduced gain for its Devex weight, or the first eligible (Bland) after a run
    // of pivots that moved nothing.
    const bool bland = no_move >= kDegenerateRun;
    int q = -1;
    double best = 0;
    double entering_gain = 0;
    for (int j = 0; j < m_ + n_; ++j) {
      const At at = at_[static_cast<std::size_t>(j)];
      if (at == At::basic || at == At::fixed) continue;
      double d;
      if (j < m_) {
        d = -y_[static_cast<std::size_t>(j)];
      } else {
        const auto c = static_cast<std::size_t>(j - m_);
        d = cost_[c];
        for (auto e = static_cast<std::size_t>(start_[c]); e < static_cast<std::size_t>(start_[c + 1]); ++e)
          d -= y_[static_cast<std::size_t>(row_[e])] * value_[e];
      }
      const double score = at == At::lower ? d : -d;
      if (score <= kDualTolerance) continue;
      if (bland) {
        q = j;
        entering_gain = d;
        break;
      }
      if (score * score > best * weight_[static_cast<std::size_t>(j)]) {  // best: the largest d² / w so far
        best = score * score / weight_[static_cast<std::size_t>(j)];
        q = j;
        entering_gain = d;
      }
    }
    if (q < 0) {
      if (since_check_ > 0 && residual() > kResidualLimit) {
        compute_basic_values();
        if (residual() > kResidualLimit && !refactor()) return Status::failed;
        continue;
      }
      optimal_ = true;
      fill_x();
      return Status::optimal;
    }
    const double dir = at_[static_cast<std::size_t>(q)] == At::lower ? 1.0 : -1.0;
    direction(q, alpha);
    // Basic value i moves by rate[i] = −dir·alpha[i] per unit the entering variable moves. The first to reach its
    // bound leaves; among ties the one with the largest rate (the stablest pivot), or under Bland's rule the smallest
    // variable.
    int p = -1;
    double step_length = kInfinity;
    double largest = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const double rate = -dir * alpha[i];
      double ratio;
      if (rate < -kPivotTolerance)
        ratio = std::max(0.0, xb_[i] / -rate);
      else if (rate > kPivotTolerance && upper(head_[i]) < kInfinity)
        ratio = std::max(0.0, (upper(head_[i]) - xb_[i]) / rate);
      else
        continue;
      const bool tie = p >= 0 && ratio <= step_length + kNoMove;
      const bool better = ratio < step_length - kNoMove ||
                          (tie && (bland ? head_[i] < head_[static_cast<std::size_t>(p)] : std::abs(rate) > largest));
      if (better) {
        step_length = p >= 0 && tie ? std::min(step_length, ratio) : ratio;
        largest = std::abs(rate);
        p = static_cast<int>(i);
      }
    }
    const double span = upper(q);  // how far the entering variable can move before its other bound
    if (span <= step_length) {    // it reaches that bound first: no basis change
      if (span >= kInfinity) return Status::failed;  // unbounded: impossible with every column at most 1
      for (std::size_t i = 0; i < m; ++i) xb_[i] -= dir * alpha[i] * span;
      at_[static_cast<std::size_t>(q)] = dir > 0 ? At::upper : At::lower;
      no_move = 0;
      continue;
    }
    for (std::size_t i = 0; i < m; ++i) {
      double& v = xb_[i];
      v -= dir * alpha[i] * step_length;
      if (std::abs(v) < kSnap) v = 0;
      else if (head_[i] >= m_ && std::abs(v - 1) < kSnap) v = 1;
    }
    const auto leaving_at = static_cast<std::size_t>(p);
    const int leaving = head_[leaving_at];
    at_[static_cast<std::size_t>(leaving)] = -dir * alpha[leaving_at] < 0 ? At::lower : At::upper;
    xb_[leaving_at] = dir > 0 ? step_length : span - step_length;
    head_[leaving_at] = q;
    at_[static_cast<std::size_t>(q)] = At::basic;
    update_duals_and_weights(p, q, leaving, alpha[leaving_at], entering_gain);
    pivot(p, alpha);
    ++pivots_;
    ++since_check_;
    no_move = step_length <= kNoMove ? no_move + 1 : 0;
  }
}

void MasterLp::update_duals_and_weights(int p, int q, int leaving, double pivot_entry, double entering_gain) {
  // ρ = row p of B⁻¹ (before the pivot): the pivot row of the tableau is ρ·a_j.
  const auto m = static_cast<std::size_t>(m_);
  row_p_.resize(m);
  for (std::size_t r = 0; r < m; ++r) row_p_[r] = binv_[r * m + static_cast<std::size_t>(p)];
  const double ratio = entering_gain / pivot_entry;
  for (std::size_t r = 0; r < m; ++r) y_[r] += ratio * row_p_[r];
  // Devex reference weights: w_j ≥ (α_pj / α_pq)² w_q for the nonbasic j, the leaving variable max(w_q / α_pq², 1).
  const double wq = weight_[static_cast<std::size_t>(q)];
  for (int j = 0; j < m_ + n_; ++j) {
    const At at = at_[static_cast<std::size_t>(j)];
    if (at == At::basic || at == At::fixed || j == leaving) continue;
    const double entry = dot(row_p_, j);
    if (entry == 0) continue;
    const double scaled = entry / pivot_entry;
    double& w = weight_[static_cast<std::size_t>(j)];
    w = std::max(w, scaled * scaled * wq);
  }
  weight_[static_cast<std::size_t>(leaving)] = std::max(wq / (pivot_entry * pivot_entry), 1.0);
  weight_[static_cast<std::size_t>(q)] = 1.0;
}

void MasterLp::fill_x() {
  x_.assign(static_cast<std::size_t>(n_), 0.0);
  for (int c = 0; c < n_; ++c) {
    const At at = at_[static_cast<std::size_t>(m_ + c)];
    if (at == At::upper || at == At::fixed) x_[static_cast<std::size_t>(c)] = 1.0;
  }
  for (std::size_t i = 0; i < head_.size(); ++i)
    if (head_[i] >= m_) x_[static_cast<std::size_t>(head_[i] - m_)] = std::clamp(xb_[i], 0.0, 1.0);  // within 1e-7
}

double MasterLp::objective() const {
  double total = 0;
  for (std::size_t c = 0; c < x_.size(); ++c) total += cost_[c] * x_[c];
  return total;
}

}  // namespace themis::arbiter
