#include "policy/arbiter/packing_lp.h"

#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>
#include <algorithm>
#include <cmath>

namespace themis::arbiter {

struct PackingLp::Impl {
  ClpSimplex lp;
  int bidders = 0;
  int items = 0;
  int columns = 0;
  bool hot = false;  // the last solve kept its factorization and work areas
};

PackingLp::PackingLp() : impl_(std::make_unique<Impl>()) {}

PackingLp::PackingLp(int item_count, int bidder_count, std::span<const LpColumn> columns,
                     std::span<const int> capacity)
    : impl_(std::make_unique<Impl>()) {
  impl_->bidders = bidder_count;
  impl_->items = item_count;
  impl_->columns = static_cast<int>(columns.size());
  std::vector<CoinBigIndex> starts;
  std::vector<int> indices, lengths;
  std::vector<double> elements, objective;
  for (const LpColumn& column : columns) {
    const auto start = indices.size();
    starts.push_back(static_cast<CoinBigIndex>(start));
    indices.push_back(column.bidder);
    elements.push_back(1.0);
    // One matrix entry per item, its coefficient the units taken (CoinPackedMatrix refuses duplicates).
    for (int g : *column.items) {
      if (indices.size() > start + 1 && indices.back() == bidder_count + g) {
        elements.back() += 1.0;
      } else {
        indices.push_back(bidder_count + g);
        elements.push_back(1.0);
      }
    }
    lengths.push_back(static_cast<int>(indices.size() - start));
    objective.push_back(column.gain);
  }
  starts.push_back(static_cast<CoinBigIndex>(indices.size()));
  const int constraints = bidder_count + item_count;
  const CoinPackedMatrix matrix(true, constraints, impl_->columns, static_cast<CoinBigIndex>(indices.size()),
                                elements.data(), indices.data(), starts.data(), lengths.data());
  const std::vector<double> col_lower(columns.size(), 0.0), col_upper(columns.size(), 1.0);
  const std::vector<double> row_lower(static_cast<std::size_t>(constraints), -COIN_DBL_MAX);
  std::vector<double> row_upper(static_cast<std::size_t>(constraints), 1.0);
  for (std::size_t g = 0; g < capacity.size() && static_cast<int>(g) < item_count; ++g)
    row_upper[static_cast<std::size_t>(bidder_count) + g] = capacity[g];
  impl_->lp.setLogLevel(0);
  impl_->lp.loadProblem(matrix, col_lower.data(), col_upper.data(), objective.data(), row_lower.data(),
                        row_upper.data());
  impl_->lp.setOptimizationDirection(-1);  // maximise
  impl_->lp.scaling(0);  // coefficients are unit counts: nothing to scale
}

PackingLp::~PackingLp() = default;

std::unique_ptr<PackingLp> PackingLp::clone() const {
  std::unique_ptr<PackingLp> copy(new PackingLp());
  copy->impl_->lp = impl_->lp;  // with its status arrays: the copy starts from the same basis
  copy->impl_->lp.setLogLevel(0);  // the copy gets a message handler of its own, at the default level
  copy->impl_->bidders = impl_->bidders;
  copy->impl_->items = impl_->items;
  copy->impl_->columns = impl_->columns;
  return copy;
}

void PackingLp::set_bounds(int column, double lower, double upper) {
  impl_->lp.setColumnLower(column, lower);
  impl_->lp.setColumnUpper(column, upper);
}

void PackingLp::set_capacity(int item, double capacity) { impl_->lp.setRowUpper(impl_->bidders + item, capacity); }

void PackingLp::set_item_minimum(int item, double minimum) {
  impl_->lp.setRowLower(impl_->bidders + item, std::isfinite(minimum) ? minimum : -COIN_DBL_MAX);
}

void PackingLp::set_gain(int column, double gain) { impl_->lp.setObjectiveCoefficient(column, gain); }

bool PackingLp::solve(double max_seconds) {
  impl_->lp.setMaximumWallSeconds(max_seconds > 0 ? max_seconds : -1);
  // Between solves only bounds change (ClpSimplex's setters update its work areas), so a solve after a
  // solved one reuses the factorization and work areas: CLP's "hot start", startFinishOptions 1 | 2 | 4.
  impl_->lp.dual(0, impl_->hot ? 7 : 1);
  impl_->hot = impl_->lp.isProvenOptimal();
  return impl_->hot;
}

std::span<const double> PackingLp::x() const {
  return {impl_->lp.primalColumnSolution(), static_cast<std::size_t>(impl_->columns)};
}

void PackingLp::item_prices(std::vector<double>& prices) const {
  item_duals(prices);
  for (double& price : prices) price = std::max(0.0, price);
}

void PackingLp::item_duals(std::vector<double>& duals) const {
  const double* row = impl_->lp.dualRowSolution();
  duals.assign(row + impl_->bidders, row + impl_->bidders + impl_->items);
}

bool PackingLp::proven_infeasible() const { return impl_->lp.isProvenPrimalInfeasible(); }

}  // namespace themis::arbiter
