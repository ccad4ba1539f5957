#include "policy/arbiter/dense_dual_lp.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <vector>

#include "policy/arbiter/dense_inverse.h"

namespace themis::arbiter {
namespace {

constexpr double kInfinity = 1e300;
constexpr double kPrimalTolerance = 1e-9;  // a basic value this far past a bound is out of it
constexpr double kDualTolerance = 1e-9;    // a reduced gain this far past 0 has a sign; also the Harris tolerance
constexpr double kPivotTolerance = 1e-7;   // a pivot-row entry within this of 0 is no pivot
constexpr double kResidualLimit = 1e-9;    // basic values that miss b by more are recomputed (then B⁻¹ rebuilt)
constexpr int kCheckEvery = 100;           // pivots and solves between checks of that
constexpr double kSingular = 1e-11;        // a pivot this small in rebuilding B⁻¹ makes the basis singular
constexpr double kSnap = 1e-11;            // a basic value this close to a bound is at it

}  // namespace

DenseDualLp::DenseDualLp(int item_count, int bidder_count, std::span<const LpColumn> columns,
                         std::span<const int> capacity)
    : m_(bidder_count + item_count), n_(static_cast<int>(columns.size())), bidders_(bidder_count) {
  start_.reserve(columns.size() + 1);
  start_.push_back(0);
  for (const LpColumn& column : columns) {
    append_entries(column, bidder_count, row_, value_);
    start_.push_back(static_cast<int>(row_.size()));
    cost_.push_back(column.gain);
  }
  // The same by rows, for the pivot row ρ·A: ρ (a row of B⁻¹) is mostly zeros.
  row_start_.assign(static_cast<std::size_t>(m_) + 1, 0);
  for (const int r : row_) ++row_start_[static_cast<std::size_t>(r) + 1];
  for (std::size_t r = 0; r < static_cast<std::size_t>(m_); ++r) row_start_[r + 1] += row_start_[r];
  by_row_column_.resize(row_.size());
  by_row_value_.resize(row_.size());
  {
    std::vector<int> next(row_start_.begin(), row_start_.end() - 1);
    for (std::size_t c = 0; c < columns.size(); ++c)
      for (auto e = static_cast<std::size_t>(start_[c]); e < static_cast<std::size_t>(start_[c + 1]); ++e) {
        const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(row_[e])]++);
        by_row_column_[at] = m_ + static_cast<int>(c);
        by_row_value_[at] = value_[e];
      }
  }
  upper_.assign(columns.size(), 1.0);
  rhs_.assign(static_cast<std::size_t>(m_), 1.0);
  minimum_.assign(static_cast<std::size_t>(m_), -kInfinity);
  slack_upper_.assign(static_cast<std::size_t>(m_), kInfinity);
  for (std::size_t g = 0; g < capacity.size() && static_cast<int>(g) < item_count; ++g)
    rhs_[static_cast<std::size_t>(bidder_count) + g] = capacity[g];
  // The slack basis: B⁻¹ = I, duals 0, every column at the bound its gain asks for (solve() puts it there).
  const auto m = static_cast<std::size_t>(m_);
  at_.assign(m + columns.size(), At::lower);
  head_.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    head_[i] = static_cast<int>(i);
    at_[i] = At::basic;
  }
  xb_.assign(m, 0.0);
  binv_.assign(m * m, 0.0);
  for (std::size_t i = 0; i < m; ++i) binv_[i * m + i] = 1.0;
  weight_.assign(m, 1.0);
  basic_cost_.assign(m, 0.0);
  y_.assign(m, 0.0);
  d_.assign(m + columns.size(), 0.0);
  row_alpha_.assign(m + columns.size(), 0.0);
  column_.assign(m, 0.0);
  flipped_.assign(m, 0.0);
  shift_.assign(m, 0.0);
  changed_.assign(columns.size(), 0);
}

void DenseDualLp::add_column(std::vector<double>& v, std::size_t c, double amount) const {
  for (auto e = static_cast<std::size_t>(start_[c]); e < static_cast<std::size_t>(start_[c + 1]); ++e)
    v[static_cast<std::size_t>(row_[e])] += amount * value_[e];
}

void DenseDualLp::set_upper(int column, double upper) {
  const auto c = static_cast<std::size_t>(column);
  double& old = upper_[c];
  if (old == upper) return;
  At& at = at_[static_cast<std::size_t>(m_) + c];
  if (at == At::upper) {  // its value moves from the old bound to the new: b − N·x_N rises by a·(old − upper)
    add_column(shift_, c, old - upper);
    if (upper == 0) at = At::lower;
  }
  old = upper;
  if (!changed_[c]) {
    changed_[c] = 1;
    changed_columns_.push_back(static_cast<int>(c));
  }
}

void DenseDualLp::set_capacity(int item, double capacity) {
  const auto r = static_cast<std::size_t>(bidders_ + item);
  shift_[r] += capacity - rhs_[r];
  rhs_[r] = capacity;
  if (boxed_) set_slack_upper(r);
}

void DenseDualLp::set_minimum(int item, double minimum) {
  const auto r = static_cast<std::size_t>(bidders_ + item);
  minimum_[r] = minimum;
  if (std::isfinite(minimum)) has_minimum_ = true;
  box_slacks();
  set_slack_upper(r);
}

void DenseDualLp::set_gain(int column, double gain) {
  cost_[static_cast<std::size_t>(column)] = gain;
  box_slacks();
  restart_ = true;
}

void DenseDualLp::box_slacks() {
  if (boxed_) return;
  boxed_ = true;
  for (std::size_t r = 0; r < static_cast<std::size_t>(m_); ++r) set_slack_upper(r);
}

void DenseDualLp::set_slack_upper(std::size_t row) {
  const double upper = std::max(0.0, rhs_[row] - std::max(0.0, minimum_[row]));
  if (slack_upper_[row] == upper) return;
  slack_upper_[row] = upper;
  restart_ = true;  // a slack at its upper bound moves with it; the start computes the basic values afresh
}

double DenseDualLp::upper_of(int j) const {
  return j < m_ ? slack_upper_[static_cast<std::size_t>(j)] : upper_[static_cast<std::size_t>(j - m_)];
}

double DenseDualLp::dot(const double* v, int j) const {
  if (j < m_) return v[j];
  const auto c = static_cast<std::size_t>(j - m_);
  double sum = 0;
  for (auto e = static_cast<std::size_t>(start_[c]); e < static_cast<std::size_t>(start_[c + 1]); ++e)
    sum += v[row_[e]] * value_[e];
  return sum;
}

void DenseDualLp::compute_basic_values() {
  const auto m = static_cast<std::size_t>(m_);
  flipped_ = rhs_;  // b less the columns (and slacks) at their upper bound
  for (std::size_t c = 0; c < static_cast<std::size_t>(n_); ++c)
    if (at_[m + c] == At::upper) add_column(flipped_, c, -upper_[c]);
  if (boxed_)
    for (std::size_t r = 0; r < m; ++r)
      if (at_[r] == At::upper) flipped_[r] -= slack_upper_[r];
  for (std::size_t i = 0; i < m; ++i) {
    const double* row = &binv_[i * m];
    double sum = 0;
    for (std::size_t k = 0; k < m; ++k) sum += row[k] * flipped_[k];
    xb_[i] = sum;
  }
  std::fill(flipped_.begin(), flipped_.end(), 0.0);
}

void DenseDualLp::compute_duals() {
  const auto m = static_cast<std::size_t>(m_);
  std::fill(y_.begin(), y_.end(), 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    const int j = head_[i];
    if (j < m_) continue;  // a slack's gain is 0
    const double c = cost_[static_cast<std::size_t>(j - m_)];
    if (c == 0) continue;
    const double* row = &binv_[i * m];
    for (std::size_t k = 0; k < m; ++k) y_[k] += c * row[k];
  }
  for (int j = 0; j < m_ + n_; ++j) {
    if (at_[static_cast<std::size_t>(j)] == At::basic) {
      d_[static_cast<std::size_t>(j)] = 0;
      continue;
    }
    d_[static_cast<std::size_t>(j)] = (j < m_ ? 0.0 : cost_[static_cast<std::size_t>(j - m_)]) - dot(y_.data(), j);
  }
}

double DenseDualLp::residual() const {
  std::vector<double> lhs(static_cast<std::size_t>(m_), 0.0);
  for (std::size_t i = 0; i < head_.size(); ++i) {
    const int j = head_[i];
    if (j < m_)
      lhs[static_cast<std::size_t>(j)] += xb_[i];
    else
      add_column(lhs, static_cast<std::size_t>(j - m_), xb_[i]);
  }
  for (std::size_t c = 0; c < static_cast<std::size_t>(n_); ++c)
    if (at_[static_cast<std::size_t>(m_) + c] == At::upper) add_column(lhs, c, upper_[c]);
  for (std::size_t r = 0; r < lhs.size(); ++r)
    if (at_[r] == At::upper) lhs[r] += slack_upper_[r];
  double worst = 0;
  for (std::size_t r = 0; r < lhs.size(); ++r) worst = std::max(worst, std::abs(lhs[r] - rhs_[r]));
  return worst;
}

bool DenseDualLp::refactor() {
  const auto m = static_cast<std::size_t>(m_);
  // B row-major (entry (row, position)): row i of its inverse is B⁻¹'s row for basis position i.
  const std::optional<std::vector<double>> inverse =
      dense_inverse(basis_matrix(m_, head_, start_, row_, value_), m, kSingular);
  if (!inverse) return false;
  binv_ = *inverse;
  for (std::size_t i = 0; i < m; ++i) {
    double norm = 0;
    for (std::size_t k = 0; k < m; ++k) norm += binv_[i * m + k] * binv_[i * m + k];
    weight_[i] = norm;
  }
  compute_basic_values();
  compute_duals();
  since_check_ = 0;
  return true;
}

double DenseDualLp::dual_objective() const {
  double total = 0;
  for (std::size_t i = 0; i < head_.size(); ++i)
    if (head_[i] >= m_) total += cost_[static_cast<std::size_t>(head_[i] - m_)] * xb_[i];
  for (std::size_t c = 0; c < static_cast<std::size_t>(n_); ++c)
    if (at_[static_cast<std::size_t>(m_) + c] == At::upper) total += cost_[c] * upper_[c];
  return total;
}

int DenseDualLp::leaving_row() const {
  int r = -1;
  double best = 0;
  for (int i = 0; i < m_; ++i) {
    const auto p = static_cast<std::size_t>(i);
    const double v = xb_[p];
    const double upper = upper_of(head_[p]);
    double out = 0;
    if (v < -kPrimalTolerance)
      out = -v;
    else if (v > upper + kPrimalTolerance)
      out = v - upper;
    else
      continue;
    const double score = out * out / weight_[p];
    if (score > best) {
      best = score;
      r = i;
    }
  }
  return r;
}

bool DenseDualLp::iterate(int r) {
  const auto m = static_cast<std::size_t>(m_);
  const auto p = static_cast<std::size_t>(r);
  const int leaving = head_[p];
  const double* rho = &binv_[p * m];
  // s = +1: the basic value lies below 0 and must rise to it (leaving at its lower bound); -1: above its upper bound.
  const double s = xb_[p] < 0 ? 1.0 : -1.0;
  const double target = s > 0 ? 0.0 : upper_of(leaving);
  double slope = std::abs(xb_[p] - target);  // how much infeasibility is left to remove
  // The pivot row's entries α_j = ρ·a_j. The basic value moves by −α_j per unit x_j rises; a column helps where that
  // moves it towards its bound: from its lower bound where s·α_j < 0, from its upper bound where s·α_j > 0.
  candidates_.clear();
  touched_.clear();
  for (std::size_t k = 0; k < m; ++k) {
    const double v = rho[k];
    if (v == 0) continue;
    row_alpha_[k] += v;
    for (auto e = static_cast<std::size_t>(row_start_[k]); e < static_cast<std::size_t>(row_start_[k + 1]); ++e)
      row_alpha_[static_cast<std::size_t>(by_row_column_[e])] += v * by_row_value_[e];
  }
  for (int j = 0; j < m_ + n_; ++j) {
    const double alpha = row_alpha_[static_cast<std::size_t>(j)];
    if (alpha == 0) continue;
    row_alpha_[static_cast<std::size_t>(j)] = 0;
    const At at = at_[static_cast<std::size_t>(j)];
    if (at == At::basic) continue;
    if (upper_of(j) == 0) continue;  // fixed at 0: never enters
    touched_.push_back({j, alpha});
    if (std::abs(alpha) < kPivotTolerance) continue;
    const bool helps = at == At::lower ? s * alpha < 0 : s * alpha > 0;
    if (!helps) continue;
    const double d = d_[static_cast<std::size_t>(j)];
    const double slack = at == At::lower ? -d : d;  // the reduced gain's distance to 0 (< 0 within the tolerance)
    candidates_.push_back({j, alpha, slack, std::max(0.0, slack) / std::abs(alpha)});
  }
  std::sort(candidates_.begin(), candidates_.end(),
            [](const Candidate& a, const Candidate& b) { return a.ratio < b.ratio || (a.ratio == b.ratio && a.j < b.j); });
  // Bound flipping: pass the breakpoints of boxed columns while the row stays infeasible with them flipped.
  std::size_t k = 0;
  for (; k < candidates_.size(); ++k) {
    const Candidate& c = candidates_[k];
    const double range = upper_of(c.j);
    const double after = slope - std::abs(c.alpha) * range;
    if (range >= kInfinity || after <= kPrimalTolerance) break;
    slope = after;
  }
  if (k == candidates_.size()) {  // no column can make row r feasible: the duals may move along s·ρ without bound
    ray_.assign(rho, rho + m);
    for (double& v : ray_) v *= s;
    return false;
  }
  // Harris: among the breakpoints left, the largest pivot whose ratio lies within the tolerance of the first.
  double bound = kInfinity;
  for (std::size_t l = k; l < candidates_.size() && candidates_[l].ratio <= bound; ++l) {
    const Candidate& c = candidates_[l];
    bound = std::min(bound, (c.slack + kDualTolerance) / std::abs(c.alpha));
  }
  std::size_t chosen = k;
  for (std::size_t l = k + 1; l < candidates_.size() && candidates_[l].ratio <= bound; ++l)
    if (std::abs(candidates_[l].alpha) > std::abs(candidates_[chosen].alpha)) chosen = l;
  const int q = candidates_[chosen].j;
  const double theta = s * candidates_[chosen].ratio;  // the dual step: d_j −= θ·α_j, y += θ·ρ
  // The columns passed go to their other bound. Those between k and `chosen` stay: their reduced gains cross 0 by at
  // most the tolerance.
  for (std::size_t l = 0; l < k; ++l) {
    const int j = candidates_[l].j;
    const double upper = upper_of(j);
    At& at = at_[static_cast<std::size_t>(j)];
    const double change = at == At::lower ? upper : -upper;
    at = at == At::lower ? At::upper : At::lower;
    if (track_objective_ && j >= m_) objective_ += cost_[static_cast<std::size_t>(j - m_)] * change;
    if (j < m_)
      flipped_[static_cast<std::size_t>(j)] += change;
    else
      add_column(flipped_, static_cast<std::size_t>(j) - m, change);
  }
  // Duals and reduced gains.
  for (std::size_t k2 = 0; k2 < m; ++k2) y_[k2] += theta * rho[k2];
  for (const auto& [j, alpha] : touched_) d_[static_cast<std::size_t>(j)] -= theta * alpha;
  d_[static_cast<std::size_t>(q)] = 0;
  d_[static_cast<std::size_t>(leaving)] = -theta;
  // Basic values: the flips, then the entering column's step.
  if (k > 0) move_basic_values(flipped_, -1.0);
  for (std::size_t i = 0; i < m; ++i) column_[i] = dot(&binv_[i * m], q);
  const double pivot_entry = column_[p];
  const double entering_from = at_[static_cast<std::size_t>(q)] == At::upper ? upper_of(q) : 0.0;
  const double step = (xb_[p] - target) / pivot_entry;
  double moved = 0;  // c_B·B⁻¹·a_q
  for (std::size_t i = 0; i < m; ++i) {
    double& v = xb_[i];
    v -= column_[i] * step;
    if (std::abs(v) < kSnap) v = 0;
    moved += basic_cost_[i] * column_[i];
  }
  // The leaving variable's value is now its bound, where it counts as nonbasic; the entering one rises by `step`.
  const double entering_cost = q < m_ ? 0.0 : cost_[static_cast<std::size_t>(q - m_)];
  if (track_objective_) objective_ += (entering_cost - moved) * step;
  basic_cost_[p] = entering_cost;
  xb_[p] = entering_from + step;
  at_[static_cast<std::size_t>(leaving)] = s > 0 || target == 0 ? At::lower : At::upper;
  head_[p] = q;
  at_[static_cast<std::size_t>(q)] = At::basic;
  pivot(r, column_);
  ++pivots_;
  ++since_check_;
  return true;
}

void DenseDualLp::pivot(int r, const std::vector<double>& alpha) {
  const auto m = static_cast<std::size_t>(m_);
  const auto p = static_cast<std::size_t>(r);
  double* pivot_row = &binv_[p * m];
  const double scale = 1.0 / alpha[p];
  nonzero_.clear();
  double norm = 0;
  for (std::size_t k = 0; k < m; ++k) {
    if (pivot_row[k] == 0) continue;
    pivot_row[k] *= scale;
    norm += pivot_row[k] * pivot_row[k];
    nonzero_.push_back(k);
  }
  weight_[p] = norm;
  // The other rows change only where the pivot row is not 0, and so do their squared norms.
  for (std::size_t i = 0; i < m; ++i) {
    if (i == p || alpha[i] == 0) continue;
    const double factor = alpha[i];
    double* row = &binv_[i * m];
    double change = 0;
    for (const std::size_t k : nonzero_) {
      const double before = row[k];
      const double after = before - factor * pivot_row[k];
      change += after * after - before * before;
      row[k] = after;
    }
    weight_[i] = std::max(weight_[i] + change, 1e-12);
  }
}

void DenseDualLp::fill_x() {
  x_.assign(static_cast<std::size_t>(n_), 0.0);
  for (int c = 0; c < n_; ++c)
    if (at_[static_cast<std::size_t>(m_ + c)] == At::upper) x_[static_cast<std::size_t>(c)] = upper_[static_cast<std::size_t>(c)];
  for (std::size_t i = 0; i < head_.size(); ++i)
    if (head_[i] >= m_) {
      const auto c = static_cast<std::size_t>(head_[i] - m_);
      x_[c] = std::clamp(xb_[i], 0.0, upper_[c]);
    }
}

void DenseDualLp::move_basic_values(std::vector<double>& change, double sign) {
  const auto m = static_cast<std::size_t>(m_);
  nonzero_.clear();
  for (std::size_t k = 0; k < m; ++k)
    if (change[k] != 0) nonzero_.push_back(k);
  if (nonzero_.empty()) return;
  for (std::size_t i = 0; i < m; ++i) {
    const double* row = &binv_[i * m];
    double sum = 0;
    for (const std::size_t k : nonzero_) sum += row[k] * change[k];
    xb_[i] += sign * sum;
    if (track_objective_) objective_ += basic_cost_[i] * sign * sum;
  }
  for (const std::size_t k : nonzero_) change[k] = 0;
}

void DenseDualLp::start_from_scratch() {
  compute_duals();
  for (int j = boxed_ ? 0 : m_; j < m_ + n_; ++j) {
    At& at = at_[static_cast<std::size_t>(j)];
    if (at == At::basic) continue;
    const double d = d_[static_cast<std::size_t>(j)];
    if (upper_of(j) == 0 || d < -kDualTolerance)
      at = At::lower;
    else if (d > kDualTolerance)
      at = At::upper;
  }
  compute_basic_values();
  std::fill(shift_.begin(), shift_.end(), 0.0);
  for (const int c : changed_columns_) changed_[static_cast<std::size_t>(c)] = 0;
  changed_columns_.clear();
}

void DenseDualLp::start_from_changes() {
  const auto m = static_cast<std::size_t>(m_);
  // The columns whose bound changed, nonbasic and open, go to the bound their reduced gain asks for (a column closed
  // until now kept a stale one). The others were left dual feasible by the last solve and keep their place.
  for (const int column : changed_columns_) {
    const auto c = static_cast<std::size_t>(column);
    changed_[c] = 0;
    At& at = at_[m + c];
    const double u = upper_[c];
    if (at == At::basic || u == 0) continue;
    const double d = cost_[c] - dot(y_.data(), m_ + column);
    d_[m + c] = d;
    const At want = d > kDualTolerance ? At::upper : d < -kDualTolerance ? At::lower : at;
    if (want == at) continue;
    add_column(shift_, c, at == At::upper ? u : -u);  // x_c from u to 0 raises b − N·x_N by a·u; from 0 to u lowers it
    at = want;
  }
  changed_columns_.clear();
  move_basic_values(shift_, 1.0);
}

DenseDualLp::Status DenseDualLp::solve(const Deadline& deadline, double cutoff) {
  track_objective_ = false;
  if (fresh_ || restart_) {
    start_from_scratch();
    fresh_ = false;
    restart_ = false;
  } else {
    start_from_changes();
  }
  ++since_check_;  // re-solves without pivots drift too
  // With a cutoff, the dual objective is kept up to date through the pivots (each changes the basic values by a
  // multiple of one column and some flips) rather than summed over every variable before each; where it reaches the
  // cutoff it is summed afresh before the solve stops on it, so its drift can delay a stop but never make one.
  if (cutoff < kNoCutoff) {
    for (std::size_t i = 0; i < head_.size(); ++i)
      basic_cost_[i] = head_[i] < m_ ? 0.0 : cost_[static_cast<std::size_t>(head_[i] - m_)];
    objective_ = dual_objective();
    track_objective_ = true;
  }
  const std::int64_t limit = pivots_ + 50 * static_cast<std::int64_t>(m_ + n_) + 1000;
  for (std::int64_t step = 0;; ++step) {
    if ((step & 63) == 63 && deadline.passed()) return Status::stopped;
    if (pivots_ > limit) return Status::failed;
    if (since_check_ >= kCheckEvery) {
      since_check_ = 0;
      // The basic values drift as the steps add up, long before B⁻¹ does: they are computed afresh first, and the
      // duals with them.
      compute_duals();
      if (residual() > kResidualLimit) compute_basic_values();
      if (residual() > kResidualLimit && !refactor()) return Status::failed;
      if (track_objective_) objective_ = dual_objective();
    }
    const int r = leaving_row();
    if (r < 0) {
      fill_x();
      return Status::optimal;
    }
    if (track_objective_ && objective_ <= cutoff) {
      objective_ = dual_objective();
      if (objective_ <= cutoff) {
        fill_x();
        return Status::cut_off;
      }
    }
    if (!iterate(r)) return Status::infeasible;
  }
}

}  // namespace themis::arbiter
