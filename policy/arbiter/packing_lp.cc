#include "policy/arbiter/packing_lp.h"

#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>
#include <algorithm>

namespace themis::arbiter {

struct PackingLp::Impl {
  ClpSimplex lp;
  int bidders = 0;
  int items = 0;
  int columns = 0;
};

PackingLp::PackingLp(int item_count, int bidder_count, std::span<const LpColumn> columns)
    : impl_(std::make_unique<Impl>()) {
  impl_->bidders = bidder_count;
  impl_->items = item_count;
  impl_->columns = static_cast<int>(columns.size());
  std::vector<CoinBigIndex> starts;
  std::vector<int> indices, lengths;
  std::vector<double> objective;
  for (const LpColumn& column : columns) {
    starts.push_back(static_cast<CoinBigIndex>(indices.size()));
    indices.push_back(column.bidder);
    for (int g : *column.items) indices.push_back(bidder_count + g);
    lengths.push_back(static_cast<int>(column.items->size()) + 1);
    objective.push_back(column.gain);
  }
  starts.push_back(static_cast<CoinBigIndex>(indices.size()));
  const std::vector<double> elements(indices.size(), 1.0);
  const int constraints = bidder_count + item_count;
  const CoinPackedMatrix matrix(true, constraints, impl_->columns, static_cast<CoinBigIndex>(indices.size()),
                                elements.data(), indices.data(), starts.data(), lengths.data());
  const std::vector<double> col_lower(columns.size(), 0.0), col_upper(columns.size(), 1.0);
  const std::vector<double> row_lower(static_cast<std::size_t>(constraints), -COIN_DBL_MAX);
  const std::vector<double> row_upper(static_cast<std::size_t>(constraints), 1.0);
  impl_->lp.setLogLevel(0);
  impl_->lp.loadProblem(matrix, col_lower.data(), col_upper.data(), objective.data(), row_lower.data(),
                        row_upper.data());
  impl_->lp.setOptimizationDirection(-1);  // maximise
}

PackingLp::~PackingLp() = default;

void PackingLp::set_bounds(int column, double lower, double upper) {
  impl_->lp.setColumnLower(column, lower);
  impl_->lp.setColumnUpper(column, upper);
}

bool PackingLp::solve(double max_seconds) {
  impl_->lp.setMaximumWallSeconds(max_seconds > 0 ? max_seconds : -1);
  impl_->lp.dual();
  return impl_->lp.isProvenOptimal();
}

std::span<const double> PackingLp::x() const {
  return {impl_->lp.primalColumnSolution(), static_cast<std::size_t>(impl_->columns)};
}

void PackingLp::item_prices(std::vector<double>& prices) const {
  const double* duals = impl_->lp.dualRowSolution();
  prices.resize(static_cast<std::size_t>(impl_->items));
  for (int g = 0; g < impl_->items; ++g)
    prices[static_cast<std::size_t>(g)] = std::max(0.0, duals[impl_->bidders + g]);
}

}  // namespace themis::arbiter
