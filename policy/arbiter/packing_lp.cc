#include "policy/arbiter/packing_lp.h"

#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/dense_dual_lp.h"

namespace themis::arbiter {

// Dense (dense_dual_lp.h) while the LP has at most DenseDualLp::kMaxRows rows; CLP for larger LPs, a dense solve that
// failed, and an LP without item minimums that the dense solver found infeasible (only rounding can make it so).
struct PackingLp::Impl {
  std::optional<DenseDualLp> dense;
  ClpSimplex lp;
  int bidders = 0;
  int items = 0;
  int columns = 0;
  bool hot = false;  // the last CLP solve kept its factorization and work areas
  bool infeasible = false;  // the last dense solve found the LP with item minimums infeasible
  bool cut_off = false;     // the last dense solve stopped at its cutoff
  // The LP as given, for loading it into CLP (shared by the copies).
  struct Matrix {
    std::vector<CoinBigIndex> starts;
    std::vector<int> indices, lengths;
    std::vector<double> elements, objective;
  };
  std::shared_ptr<const Matrix> matrix;
  void load_clp();
};

void PackingLp::Impl::load_clp() {
  const int constraints = bidders + items;
  const CoinPackedMatrix packed(true, constraints, columns, static_cast<CoinBigIndex>(matrix->indices.size()),
                                matrix->elements.data(), matrix->indices.data(), matrix->starts.data(),
                                matrix->lengths.data());
  std::vector<double> col_upper(static_cast<std::size_t>(columns), 1.0);
  std::vector<double> row_upper(static_cast<std::size_t>(constraints), 1.0);
  std::vector<double> row_lower(static_cast<std::size_t>(constraints), -COIN_DBL_MAX);
  std::vector<double> objective = matrix->objective;
  if (dense) {
    col_upper = dense->upper();
    row_upper = dense->rhs();
    objective = dense->gains();
    for (std::size_t r = 0; r < row_lower.size(); ++r)
      if (std::isfinite(dense->minimum()[r])) row_lower[r] = dense->minimum()[r];
  }
  const std::vector<double> col_lower(static_cast<std::size_t>(columns), 0.0);
  lp.setLogLevel(0);
  lp.loadProblem(packed, col_lower.data(), col_upper.data(), objective.data(), row_lower.data(), row_upper.data());
  lp.setOptimizationDirection(-1);  // maximise
  lp.scaling(0);  // coefficients are unit counts: nothing to scale
  dense.reset();
  hot = false;
}

void append_entries(const LpColumn& column, int bidder_count, std::vector<int>& rows, std::vector<double>& values) {
  const std::size_t first = rows.size();
  rows.push_back(column.bidder);
  values.push_back(1.0);
  for (int g : *column.items) {  // sorted: a repeated item adds a unit to the entry before
    if (rows.size() > first + 1 && rows.back() == bidder_count + g) {
      values.back() += 1.0;
    } else {
      rows.push_back(bidder_count + g);
      values.push_back(1.0);
    }
  }
}

PackingLp::PackingLp() : impl_(std::make_unique<Impl>()) {}

PackingLp::PackingLp(int item_count, int bidder_count, std::span<const LpColumn> columns,
                     std::span<const int> capacity, Engine engine)
    : impl_(std::make_unique<Impl>()) {
  impl_->bidders = bidder_count;
  impl_->items = item_count;
  impl_->columns = static_cast<int>(columns.size());
  auto matrix = std::make_shared<Impl::Matrix>();
  auto& indices = matrix->indices;
  auto& elements = matrix->elements;
  for (const LpColumn& column : columns) {
    const auto start = indices.size();
    matrix->starts.push_back(static_cast<CoinBigIndex>(start));
    append_entries(column, bidder_count, indices, elements);  // one entry per item: CoinPackedMatrix refuses duplicates
    matrix->lengths.push_back(static_cast<int>(indices.size() - start));
    matrix->objective.push_back(column.gain);
  }
  matrix->starts.push_back(static_cast<CoinBigIndex>(indices.size()));
  impl_->matrix = std::move(matrix);
  if (engine == Engine::automatic && bidder_count + item_count <= DenseDualLp::kMaxRows) {
    impl_->dense.emplace(item_count, bidder_count, columns, capacity);
    return;
  }
  impl_->load_clp();
  for (std::size_t g = 0; g < capacity.size() && static_cast<int>(g) < item_count; ++g)
    impl_->lp.setRowUpper(bidder_count + static_cast<int>(g), capacity[g]);
}

PackingLp::~PackingLp() = default;

std::unique_ptr<PackingLp> PackingLp::clone() const {
  std::unique_ptr<PackingLp> copy(new PackingLp());
  Impl& to = *copy->impl_;
  const Impl& from = *impl_;
  to.dense = from.dense;
  to.infeasible = from.infeasible;
  if (!from.dense) {
    to.lp = from.lp;  // with its status arrays: the copy starts from the same basis
    to.lp.setLogLevel(0);  // the copy gets a message handler of its own, at the default level
  }
  to.bidders = from.bidders;
  to.items = from.items;
  to.columns = from.columns;
  to.matrix = from.matrix;
  return copy;
}

void PackingLp::set_bounds(int column, double lower, double upper) {
  if (impl_->dense && lower == 0) {
    impl_->dense->set_upper(column, upper);
    return;
  }
  if (impl_->dense) impl_->load_clp();
  impl_->lp.setColumnLower(column, lower);
  impl_->lp.setColumnUpper(column, upper);
}

void PackingLp::set_capacity(int item, double capacity) {
  if (impl_->dense && capacity >= 0) {
    impl_->dense->set_capacity(item, capacity);
    return;
  }
  if (impl_->dense) impl_->load_clp();
  impl_->lp.setRowUpper(impl_->bidders + item, capacity);
}

void PackingLp::set_item_minimum(int item, double minimum) {
  if (impl_->dense) {
    impl_->dense->set_minimum(item, minimum);
    return;
  }
  impl_->lp.setRowLower(impl_->bidders + item, std::isfinite(minimum) ? minimum : -COIN_DBL_MAX);
}

void PackingLp::set_gain(int column, double gain) {
  if (impl_->dense) {
    impl_->dense->set_gain(column, gain);
    return;
  }
  impl_->lp.setObjectiveCoefficient(column, gain);
}

bool PackingLp::solve(double max_seconds, double cutoff) {
  impl_->infeasible = false;
  impl_->cut_off = false;
  if (impl_->dense) {
    switch (impl_->dense->solve(Deadline(max_seconds), cutoff)) {
      case DenseDualLp::Status::optimal:
        return true;
      case DenseDualLp::Status::cut_off:
        impl_->cut_off = true;
        return true;
      case DenseDualLp::Status::stopped:
        return false;
      case DenseDualLp::Status::infeasible:
        if (impl_->dense->has_minimum()) {
          impl_->infeasible = true;
          return false;
        }
        impl_->load_clp();
        break;
      case DenseDualLp::Status::failed:
        impl_->load_clp();  // from scratch, at the bounds and capacities now set
        break;
    }
  }
  impl_->lp.setMaximumWallSeconds(max_seconds > 0 ? max_seconds : -1);
  // Between solves only bounds change (ClpSimplex's setters update its work areas), so a solve after a
  // solved one reuses the factorization and work areas: CLP's "hot start", startFinishOptions 1 | 2 | 4.
  impl_->lp.dual(0, impl_->hot ? 7 : 1);
  impl_->hot = impl_->lp.isProvenOptimal();
  return impl_->hot;
}

std::span<const double> PackingLp::x() const {
  if (impl_->dense) return impl_->dense->x();
  return {impl_->lp.primalColumnSolution(), static_cast<std::size_t>(impl_->columns)};
}

void PackingLp::item_prices(std::vector<double>& prices) const {
  item_duals(prices);
  for (double& price : prices) price = std::max(0.0, price);
}

void PackingLp::item_duals(std::vector<double>& duals) const {
  const double* row = impl_->dense ? impl_->dense->duals().data() : impl_->lp.dualRowSolution();
  duals.assign(row + impl_->bidders, row + impl_->bidders + impl_->items);
}

bool PackingLp::cut_off() const { return impl_->cut_off; }

bool PackingLp::item_ray(std::vector<double>& ray) const {
  if (!impl_->dense || !impl_->infeasible) return false;
  const std::vector<double>& all = impl_->dense->dual_ray();
  if (all.size() != static_cast<std::size_t>(impl_->bidders + impl_->items)) return false;
  ray.assign(all.begin() + impl_->bidders, all.end());
  return true;
}

bool PackingLp::proven_infeasible() const {
  return impl_->dense ? impl_->infeasible : impl_->lp.isProvenPrimalInfeasible();
}

}  // namespace themis::arbiter
