#pragma once
// What of each item's residual the bidders still to choose can use, for the shape search's bounds (docs/arbiter.md,
// "Usable capacity"). Whatever bidders [position, end) pick, each takes one row or none, so of an item they take one
// of the totals their rows' units can add up to, and only the largest such total within a residual counts: a machine
// with 6 free GPUs is 4 to gangs of 4 and 8, and 0 to bidders that do not draw from it. Each item is counted alone
// (a row's units on its other items are not asked for), so this bounds what the bidders can use, and the exact
// packing problem stays the same.
#include <cstddef>
#include <vector>

#include "policy/arbiter/search_rows.h"

namespace themis::arbiter {

class UsableCapacity {
 public:
  UsableCapacity() = default;
  // Tables for `bidders` in the search's order, on items of `capacity` units each: a subset-sum pass per item from
  // the last bidder to the first.
  UsableCapacity(const std::vector<SearchBidder>& bidders, const std::vector<int>& capacity);

  // The largest total of `item` within `residual` (0 ≤ residual ≤ its capacity) that bidders [position, end) can
  // take together; 0 at position bidders.size().
  int of(std::size_t position, std::size_t item, int residual) const {
    return table_[position * block_ + offset_[item] + static_cast<std::size_t>(residual)];
  }

 private:
  std::vector<std::size_t> offset_;  // per item: where its part of a position's table starts
  std::size_t block_ = 0;            // one position's part: every item's residuals 0 .. capacity
  std::vector<int> table_;           // per position, per item, per residual
};

}  // namespace themis::arbiter
