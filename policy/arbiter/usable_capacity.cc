#include "policy/arbiter/usable_capacity.h"

#include <algorithm>

namespace themis::arbiter {

UsableCapacity::UsableCapacity(const std::vector<SearchBidder>& bidders, const std::vector<int>& capacity) {
  const std::size_t items = capacity.size();
  offset_.assign(items + 1, 0);
  for (std::size_t i = 0; i < items; ++i) offset_[i + 1] = offset_[i] + static_cast<std::size_t>(capacity[i]) + 1;
  block_ = offset_[items];
  table_.assign((bidders.size() + 1) * block_, 0);  // position n: nothing is usable
  std::vector<char> reach(block_, 0), before;        // per item and total: reachable
  for (std::size_t i = 0; i < items; ++i) reach[offset_[i]] = 1;
  std::vector<std::vector<int>> units(items);  // bidder d's distinct units per item
  for (std::size_t d = bidders.size(); d-- > 0;) {
    std::vector<int> touched;
    for (const SearchRow& row : bidders[d].rows)
      for (const ItemLoad& l : row.loads) {
        auto& u = units[static_cast<std::size_t>(l.item)];
        if (u.empty()) touched.push_back(l.item);
        if (std::find(u.begin(), u.end(), l.units) == u.end()) u.push_back(l.units);
      }
    before = reach;
    for (const int item : touched) {
      const auto i = static_cast<std::size_t>(item);
      const char* was = before.data() + offset_[i];
      char* now = reach.data() + offset_[i];
      for (const int u : units[i])
        for (int total = 0; total + u <= capacity[i]; ++total)
          if (was[total] != 0) now[total + u] = 1;
      units[i].clear();
    }
    int* table = table_.data() + d * block_;
    for (std::size_t i = 0; i < items; ++i) {
      int largest = 0;
      for (std::size_t r = offset_[i]; r < offset_[i + 1]; ++r) {
        if (reach[r] != 0) largest = static_cast<int>(r - offset_[i]);
        table[r] = largest;
      }
    }
  }
}

}  // namespace themis::arbiter
