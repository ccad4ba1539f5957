// The totals of each item that the bidders still to choose can take together, on their own;
// tests/arbiter/shape_usable_capacity_test.cc checks what they do to the shape solver's bounds.
#include "policy/arbiter/usable_capacity.h"

#include <gtest/gtest.h>

#include <vector>

namespace themis::arbiter {
namespace {

SearchRow row(std::vector<ItemLoad> loads) { return {0, 1.0, std::move(loads)}; }

TEST(UsableCapacity, GangsOfFourAndEightUseFourOfSixFreeUnits) {
  const std::vector<SearchBidder> bidders = {{0, {row({{0, 8}})}}, {1, {row({{0, 4}})}}};
  const UsableCapacity usable(bidders, {12});
  EXPECT_EQ(usable.of(0, 0, 6), 4);
  EXPECT_EQ(usable.of(0, 0, 3), 0);
  EXPECT_EQ(usable.of(0, 0, 8), 8);
  EXPECT_EQ(usable.of(0, 0, 11), 8);
  EXPECT_EQ(usable.of(0, 0, 12), 12);
  // From position 1 only the gang of four is left to choose.
  EXPECT_EQ(usable.of(1, 0, 12), 4);
  EXPECT_EQ(usable.of(1, 0, 3), 0);
  // Past the last bidder nothing is usable.
  EXPECT_EQ(usable.of(2, 0, 12), 0);
}

TEST(UsableCapacity, ABidderTakesOneOfItsRowsNotTheirSum) {
  // One bidder with rows of 2 and 3 units: it takes 0, 2 or 3, never 5.
  const std::vector<SearchBidder> bidders = {{0, {row({{0, 3}}), row({{0, 2}})}}};
  const UsableCapacity usable(bidders, {6});
  EXPECT_EQ(usable.of(0, 0, 6), 3);
  EXPECT_EQ(usable.of(0, 0, 2), 2);
  EXPECT_EQ(usable.of(0, 0, 1), 0);
}

TEST(UsableCapacity, AnItemNobodyStillToChooseDrawsFromIsUnusable) {
  // The first bidder draws from items 0 and 1 in one row, the second from item 1 only.
  const std::vector<SearchBidder> bidders = {{0, {row({{0, 2}, {1, 1}})}}, {1, {row({{1, 2}})}}};
  const UsableCapacity usable(bidders, {4, 4});
  EXPECT_EQ(usable.of(0, 0, 4), 2);
  EXPECT_EQ(usable.of(1, 0, 4), 0);
  EXPECT_EQ(usable.of(0, 1, 4), 3);  // 1 + 2
  EXPECT_EQ(usable.of(0, 1, 2), 2);
  EXPECT_EQ(usable.of(1, 1, 1), 0);
}

}  // namespace
}  // namespace themis::arbiter
