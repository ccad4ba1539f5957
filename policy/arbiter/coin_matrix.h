#pragma once
// A packing problem's LP matrix for Coin (CLP, CBC): a column per row kept, with 1 in its bidder's constraint and its
// units in its items' (the bidders' constraints first, then the items'; a repeated item is one coefficient). Built in
// one go: CoinPackedMatrix::appendCol copies the matrix whole for every column, quadratic in the columns (at 200
// bidders and 4,300 rows most of the first 100 ms of a cut bound), and a matrix given room ahead (`reserve`) made
// CBC's nodes 1.7× slower (docs/performance.md, "Time budgets that hold").
#include <CoinPackedMatrix.hpp>

#include <vector>

#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

// `keep(bidder, row)`: whether the row becomes a column; the columns follow the bidders and their rows in order.
template <class Keep>
CoinPackedMatrix packing_columns(const PackingProblem& problem, Keep keep) {
  const int bidders = static_cast<int>(problem.bidders.size());
  std::vector<CoinBigIndex> starts;
  std::vector<int> indices, lengths;
  std::vector<double> elements;
  for (int b = 0; b < bidders; ++b) {
    const auto& rows = problem.bidders[static_cast<std::size_t>(b)].rows;
    for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
      if (!keep(b, r)) continue;
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

}  // namespace themis::arbiter
