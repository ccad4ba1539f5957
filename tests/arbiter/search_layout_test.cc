// What the shape searches of one problem share (search_layout.h): the bidders in the search's order with the rows
// they may take, the rows flattened, and the items each position's bidders draw from. Whether a memory's layout is
// rebuilt for another problem: tests/arbiter/shape_memory_test.cc, AMemoryMadeForAnotherProblemIsNotUsed.
#include "policy/arbiter/search_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace themis::arbiter {
namespace {

// Items 0 and 1 with 4 and 2 units.
PackingProblem hand_made() {
  PackingProblem p;
  p.item_count = 2;
  p.item_capacity = {4, 2};
  p.bidders = {
      {1, {{0, 1.0, {0, 0}}, {1, 0.9, {0, 0, 0}}, {2, 3.0, {0, 0, 0, 0, 0}}}},  // a: 2 of item 0; 3 for less; 5 too many
      {2, {{0, 0.5, {1}}}},                                                    // b: 1 of item 1
      {3, {{0, 4.0, {1, 1, 1}}}},                                              // c: 3 of item 1, which has 2
      {4, {{0, 0.2, {0, 1, 1}}, {1, 0.0, {0}}}},                               // d: 3 units; a row of no gain
  };
  return p;
}

TEST(SearchLayout, KeepsTheRowsThatFitAndAreNotDominatedWidestBidderFirst) {
  const PackingProblem p = hand_made();
  const auto layout = make_search_layout(p);
  EXPECT_EQ(layout->problem, &p);
  EXPECT_EQ(layout->capacity, (std::vector<int>{4, 2}));
  // c has no row that fits; d (3 units) comes before a (2) and b (1).
  ASSERT_EQ(layout->bidders.size(), 3u);
  EXPECT_EQ(layout->bidders[0].index, 3);
  EXPECT_EQ(layout->bidders[1].index, 0);
  EXPECT_EQ(layout->bidders[2].index, 1);
  // d keeps its row of gain only; a keeps its first row (the second needs more for less, the third does not fit).
  ASSERT_EQ(layout->bidders[0].rows.size(), 1u);
  EXPECT_EQ(layout->bidders[0].rows[0].source, 0);
  ASSERT_EQ(layout->bidders[1].rows.size(), 1u);
  EXPECT_EQ(layout->bidders[1].rows[0].source, 0);
  EXPECT_EQ(layout->row_ranges, (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}}));
  // From position 0 every item is drawn from; from position 2 (b) item 1 only; past the end none.
  EXPECT_EQ(layout->items_from[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(layout->items_from[1], (std::vector<int>{0, 1}));
  EXPECT_EQ(layout->items_from[2], (std::vector<int>{1}));
  EXPECT_TRUE(layout->items_from[3].empty());
  // Item 1 has 2 units: from position 1 on, a and b can take 1 of them together (b's), from position 0 d's 2 as well.
  EXPECT_EQ(layout->usable.of(0, 1, 2), 2);
  EXPECT_EQ(layout->usable.of(1, 1, 2), 1);
}

// 1 to 8 bidders of 1 to 6 rows, each taking 1 to 5 units of 2 to 10 items of 1 to 4 units.
PackingProblem random_problem(std::mt19937& rng) {
  const auto below = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  PackingProblem p;
  p.item_count = 2 + below(9);
  for (int i = 0; i < p.item_count; ++i) p.item_capacity.push_back(1 + below(4));
  const int bidders = 1 + below(8);
  for (int b = 0; b < bidders; ++b) {
    PackingBidder bidder{b + 1, {}};
    const int rows = 1 + below(6);
    for (int r = 0; r < rows; ++r) {
      std::vector<int> items;
      const int units = 1 + below(5);
      for (int u = 0; u < units; ++u) items.push_back(below(p.item_count));
      std::sort(items.begin(), items.end());
      bidder.rows.push_back({r, 0.25 * (1 + below(6)), items});
    }
    p.bidders.push_back(std::move(bidder));
  }
  return p;
}

// On random problems the flat rows are the bidders' rows in order, with their gains and loads, and each position's
// items are those its bidders and the later ones draw from.
TEST(SearchLayout, FlatRowsAndItemsFollowTheBidders) {
  std::mt19937 rng(41);
  for (int instance = 0; instance < 200; ++instance) {
    SCOPED_TRACE("instance " + std::to_string(instance));
    const PackingProblem p = random_problem(rng);
    const auto layout = make_search_layout(p);
    ASSERT_EQ(layout->row_ranges.size(), layout->bidders.size());
    ASSERT_EQ(layout->items_from.size(), layout->bidders.size() + 1);
    std::set<int> drawn;
    for (std::size_t k = layout->bidders.size(); k-- > 0;) {
      const SearchBidder& bidder = layout->bidders[k];
      const auto [first, last] = layout->row_ranges[k];
      ASSERT_EQ(static_cast<std::size_t>(last - first), bidder.rows.size());
      for (std::size_t r = 0; r < bidder.rows.size(); ++r) {
        const SearchRow& row = bidder.rows[r];
        const SearchLayout::FlatRow& flat = layout->rows[static_cast<std::size_t>(first) + r];
        EXPECT_EQ(flat.gain, row.gain);
        EXPECT_EQ(flat.gain, p.bidders[static_cast<std::size_t>(bidder.index)].rows[static_cast<std::size_t>(row.source)].gain);
        ASSERT_EQ(static_cast<std::size_t>(flat.end - flat.begin), row.loads.size());
        for (std::size_t l = 0; l < row.loads.size(); ++l) {
          EXPECT_EQ(layout->loads[static_cast<std::size_t>(flat.begin) + l].item, row.loads[l].item);
          EXPECT_EQ(layout->loads[static_cast<std::size_t>(flat.begin) + l].units, row.loads[l].units);
          drawn.insert(row.loads[l].item);
        }
      }
      EXPECT_EQ(layout->items_from[k], (std::vector<int>(drawn.begin(), drawn.end())));
    }
  }
}

}  // namespace
}  // namespace themis::arbiter
