// The shape search's memory of subproblem bounds on its own: what a key holds, which states share one, what a
// copy sees, and its caps. tests/arbiter/shape_memory_test.cc checks what the memory does to whole auctions.
#include "policy/arbiter/subproblem_bounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace themis::arbiter {
namespace {

SearchRow row(double gain, std::vector<ItemLoad> loads) { return {0, gain, std::move(loads)}; }

double lookup(const SubproblemBounds& bounds, std::size_t position, int tag, const std::vector<int>& residual) {
  SubproblemBounds::Key key;
  bounds.make_key(position, residual, key);
  return bounds.find(position, tag, key);
}

void keep(SubproblemBounds& bounds, std::size_t position, int tag, const std::vector<int>& residual, double bound) {
  SubproblemBounds::Key key;
  bounds.make_key(position, residual, key);
  bounds.record(position, tag, key, bound);
}

constexpr int kFull = SubproblemBounds::kFull;

TEST(SubproblemBounds, HoldsTheLowestBoundRecordedForASubproblemAndNothingForOthers) {
  const PackingProblem problem;
  const std::vector<SearchBidder> bidders = {{0, {row(1.0, {{0, 2}})}}, {1, {row(0.5, {{1, 1}})}}};
  SubproblemBounds bounds;
  bounds.use_for(&problem, bidders, 2);
  EXPECT_TRUE(std::isinf(lookup(bounds, 0, kFull, {2, 1})));
  keep(bounds, 0, kFull, {2, 1}, 5.0);
  EXPECT_EQ(lookup(bounds, 0, kFull, {2, 1}), 5.0);
  keep(bounds, 0, kFull, {2, 1}, 7.0);
  EXPECT_EQ(lookup(bounds, 0, kFull, {2, 1}), 5.0);
  keep(bounds, 0, kFull, {2, 1}, 3.0);
  EXPECT_EQ(lookup(bounds, 0, kFull, {2, 1}), 3.0);
  keep(bounds, 0, kFull, {2, 1}, std::numeric_limits<double>::infinity());  // a search the limits stopped proves nothing
  EXPECT_EQ(lookup(bounds, 0, kFull, {2, 1}), 3.0);
  // Another tag (the same state without an excluded bidder), position or residual is another subproblem.
  EXPECT_TRUE(std::isinf(lookup(bounds, 0, 1, {2, 1})));
  EXPECT_TRUE(std::isinf(lookup(bounds, 1, kFull, {2, 1})));
  EXPECT_TRUE(std::isinf(lookup(bounds, 0, kFull, {1, 1})));
}

TEST(SubproblemBounds, ResidualsCountOnlyUpToWhatTheBiddersStillToChooseCanAsk) {
  const PackingProblem problem;
  // Position 0 may ask 2 of item 0 and, with position 1, 3 of item 1; position 1 asks nothing of item 0.
  const std::vector<SearchBidder> bidders = {{0, {row(1.0, {{0, 2}}), row(0.8, {{0, 1}, {1, 1}})}},
                                             {1, {row(0.5, {{1, 2}})}}};
  SubproblemBounds bounds;
  bounds.use_for(&problem, bidders, 2);
  keep(bounds, 0, kFull, {5, 4}, 1.5);
  EXPECT_EQ(lookup(bounds, 0, kFull, {2, 3}), 1.5);
  EXPECT_EQ(lookup(bounds, 0, kFull, {9, 9}), 1.5);
  EXPECT_TRUE(std::isinf(lookup(bounds, 0, kFull, {1, 3})));
  EXPECT_TRUE(std::isinf(lookup(bounds, 0, kFull, {2, 2})));
  keep(bounds, 1, kFull, {0, 2}, 0.5);
  EXPECT_EQ(lookup(bounds, 1, kFull, {7, 2}), 0.5);
  EXPECT_EQ(lookup(bounds, 1, kFull, {0, 5}), 0.5);
  EXPECT_TRUE(std::isinf(lookup(bounds, 1, kFull, {0, 1})));
}

TEST(SubproblemBounds, StatesThatDifferByWhichOfTwoInterchangeableItemsIsLeftShareAKey) {
  const PackingProblem problem;
  // Alone, the first bidder cannot tell items 0 and 1 apart: two free units of either are worth the same.
  const SearchBidder even{0, {row(1.0, {{0, 2}}), row(1.0, {{1, 2}})}};
  SubproblemBounds bounds;
  bounds.use_for(&problem, {even}, 2);
  keep(bounds, 0, kFull, {2, 0}, 1.0);
  EXPECT_EQ(lookup(bounds, 0, kFull, {0, 2}), 1.0);
  // A bidder after it that draws from item 0 only tells them apart from position 0 on.
  const PackingProblem other;
  SubproblemBounds told;
  told.use_for(&other, {even, {1, {row(0.5, {{0, 1}})}}}, 2);
  keep(told, 0, kFull, {2, 0}, 1.5);
  EXPECT_TRUE(std::isinf(lookup(told, 0, kFull, {0, 2})));
}

TEST(SubproblemBounds, ACopySharesWhatWasRecordedBeforeItAndKeepsItsOwnRecordsApart) {
  const PackingProblem problem;
  const std::vector<SearchBidder> bidders = {{0, {row(1.0, {{0, 3}})}}, {1, {row(0.5, {{1, 3}})}}};
  SubproblemBounds original;
  original.use_for(&problem, bidders, 2);
  keep(original, 0, kFull, {1, 1}, 4.0);
  original.share();
  SubproblemBounds first = original;
  EXPECT_EQ(lookup(first, 0, kFull, {1, 1}), 4.0);
  keep(first, 0, kFull, {2, 2}, 6.0);
  keep(first, 0, kFull, {1, 1}, 2.0);  // lower, in its own part
  EXPECT_EQ(lookup(first, 0, kFull, {1, 1}), 2.0);
  EXPECT_EQ(lookup(original, 0, kFull, {1, 1}), 4.0);
  EXPECT_TRUE(std::isinf(lookup(original, 0, kFull, {2, 2})));
  // What the original records after the copy was taken reaches later copies only.
  keep(original, 0, kFull, {3, 3}, 1.0);
  original.share();
  const SubproblemBounds second = original;
  EXPECT_EQ(lookup(second, 0, kFull, {3, 3}), 1.0);
  EXPECT_EQ(lookup(second, 0, kFull, {1, 1}), 4.0);
  EXPECT_TRUE(std::isinf(lookup(second, 0, kFull, {2, 2})));
  EXPECT_TRUE(std::isinf(lookup(first, 0, kFull, {3, 3})));
}

TEST(SubproblemBounds, AtItsCapItStoresNoNewSubproblemButACopyHasRoomOfItsOwn) {
  const PackingProblem problem;
  // Three items of up to 63 units each, told apart by the gains: 64^3 = kMaxEntries residuals, each a key of its own.
  const std::vector<SearchBidder> bidders = {{0, {row(1.0, {{0, 63}}), row(0.9, {{1, 63}}), row(0.8, {{2, 63}})}}};
  static_assert(SubproblemBounds::kMaxEntries == 64 * 64 * 64);
  SubproblemBounds bounds;
  bounds.use_for(&problem, bidders, 3);
  SubproblemBounds::Key key;
  for (int a = 0; a < 64; ++a)
    for (int b = 0; b < 64; ++b)
      for (int c = 0; c < 64; ++c) {
        bounds.make_key(0, {a, b, c}, key);
        bounds.record(0, kFull, key, 10.0);
      }
  EXPECT_EQ(lookup(bounds, 0, kFull, {63, 63, 63}), 10.0);
  keep(bounds, 1, kFull, {0, 0, 0}, 0.0);  // a new subproblem: no room
  EXPECT_TRUE(std::isinf(lookup(bounds, 1, kFull, {0, 0, 0})));
  keep(bounds, 0, kFull, {5, 5, 5}, 1.0);  // one it holds still gets lower
  EXPECT_EQ(lookup(bounds, 0, kFull, {5, 5, 5}), 1.0);
  bounds.share();
  SubproblemBounds copy = bounds;
  keep(copy, 1, kFull, {0, 0, 0}, 0.0);
  EXPECT_EQ(lookup(copy, 1, kFull, {0, 0, 0}), 0.0);
  EXPECT_EQ(lookup(copy, 0, kFull, {5, 5, 5}), 1.0);
}

TEST(SubproblemBounds, MadeForAnotherProblemItStartsOver) {
  const PackingProblem problem, other;
  const std::vector<SearchBidder> bidders = {{0, {row(1.0, {{0, 2}})}}};
  SubproblemBounds bounds;
  bounds.use_for(&problem, bidders, 1);
  keep(bounds, 0, kFull, {2}, 1.0);
  bounds.use_for(&problem, bidders, 1);
  EXPECT_EQ(lookup(bounds, 0, kFull, {2}), 1.0);
  bounds.use_for(&other, bidders, 1);
  EXPECT_TRUE(std::isinf(lookup(bounds, 0, kFull, {2})));
}

}  // namespace
}  // namespace themis::arbiter
