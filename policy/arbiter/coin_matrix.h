#pragma once
// A packing problem's LP matrix for Coin (CLP, CBC), and the LP loaded with it: a column per row kept, with 1 in its
// bidder's constraint and its units in its items' (the bidders' constraints first, then the items'; a repeated item is
// one coefficient). Built in one go: CoinPackedMatrix::appendCol copies the matrix whole for every column, quadratic in
// the columns (at 200 bidders and 4,300 rows most of the first 100 ms of a cut bound), and a matrix given room ahead
// (`reserve`) made CBC's nodes 1.7× slower (docs/performance.md, "Time budgets that hold").
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <vector>

#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

struct PackingColumn {
  int bidder = 0;
  int row = 0;  // into the bidder's rows
};

// `keep(bidder, row)`: whether the row becomes a column; the columns follow the bidders and their rows in order, and
// `columns` (where given) receives each one's bidder and row.
template <class Keep>
CoinPackedMatrix packing_columns(const PackingProblem& problem, Keep keep, std::vector<PackingColumn>* columns = nullptr) {
  const int bidders = static_cast<int>(problem.bidders.size());
  std::vector<CoinBigIndex> starts;
  std::vector<int> indices, lengths;
  std::vector<double> elements;
  for (int b = 0; b < bidders; ++b) {
    const auto& rows = problem.bidders[static_cast<std::size_t>(b)].rows;
    for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
      if (!keep(b, r)) continue;
      if (columns != nullptr) columns->push_back({b, r});
      starts.push_back(static_cast<CoinBigIndex>(indices.size()));
      indices.push_back(b);
      elements.push_back(1.0);
      for (const ItemLoad& load : item_loads(rows[static_cast<std::size_t>(r)])) {
        indices.push_back(bidders + load.item);
        elements.push_back(load.units);
      }
      lengths.push_back(static_cast<int>(static_cast<CoinBigIndex>(indices.size()) - starts.back()));
    }
  }
  starts.push_back(static_cast<CoinBigIndex>(indices.size()));
  return CoinPackedMatrix(true, bidders + problem.item_count, static_cast<int>(lengths.size()),
                          static_cast<CoinBigIndex>(indices.size()), elements.data(), indices.data(), starts.data(),
                          lengths.data());
}

// The problem's LP relaxation, loaded into `lp` for CLP, CBC and the Cgl cuts: packing_columns' columns, each between 0
// and 1 and integer, its objective the row's −gain (Coin minimises); each bidder's constraint between 0 and 1, each
// item's between 0 and its capacity. Returns the columns (empty: nothing was loaded).
template <class Keep>
std::vector<PackingColumn> load_packing_lp(OsiClpSolverInterface& lp, const PackingProblem& problem, Keep keep) {
  std::vector<PackingColumn> columns;
  const CoinPackedMatrix matrix = packing_columns(problem, keep, &columns);
  if (columns.empty()) return columns;
  std::vector<double> objective;
  objective.reserve(columns.size());
  for (const PackingColumn& c : columns)
    objective.push_back(-problem.bidders[static_cast<std::size_t>(c.bidder)].rows[static_cast<std::size_t>(c.row)].gain);
  const std::vector<double> column_lower(columns.size(), 0.0), column_upper(columns.size(), 1.0);
  const std::size_t bidders = problem.bidders.size();
  std::vector<double> row_lower(bidders + static_cast<std::size_t>(problem.item_count), 0.0);
  std::vector<double> row_upper(row_lower.size(), 1.0);
  for (int item = 0; item < problem.item_count; ++item)
    row_upper[bidders + static_cast<std::size_t>(item)] = problem.capacity(item);
  lp.loadProblem(matrix, column_lower.data(), column_upper.data(), objective.data(), row_lower.data(), row_upper.data());
  for (std::size_t c = 0; c < columns.size(); ++c) lp.setInteger(static_cast<int>(c));
  return columns;
}

}  // namespace themis::arbiter
