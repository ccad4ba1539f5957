// The dense inverse that MasterLp and DenseDualLp rebuild B⁻¹ with (dense_inverse.h): A·A⁻¹ = I on random bases of
// slacks and packing columns (which need row swaps), and singular bases refused.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "policy/arbiter/dense_inverse.h"

namespace themis::arbiter {
namespace {

TEST(DenseInverse, InvertsRandomBasesOfSlacksAndColumns) {
  std::mt19937 rng(3);
  int inverted = 0;
  for (int instance = 0; instance < 100; ++instance) {
    SCOPED_TRACE(instance);
    const int m = std::uniform_int_distribution<int>(1, 40)(rng);
    // Columns: position i holds a column with a 1 in row i (so the basis is not singular) and up to three more entries
    // of 1 to 3 units in other rows; a third of the positions hold their row's slack instead.
    std::vector<int> head, start{0}, row;
    std::vector<double> value;
    for (int i = 0; i < m; ++i) {
      if (std::bernoulli_distribution(1.0 / 3)(rng)) {
        head.push_back(i);
        continue;
      }
      head.push_back(m + static_cast<int>(start.size()) - 1);
      row.push_back(i);
      value.push_back(std::uniform_int_distribution<int>(1, 3)(rng));
      for (int k = 0; k < 3; ++k) {
        const int r = std::uniform_int_distribution<int>(0, m - 1)(rng);
        if (r == i) continue;
        row.push_back(r);
        value.push_back(std::uniform_int_distribution<int>(1, 3)(rng));
      }
      start.push_back(static_cast<int>(row.size()));
    }
    const auto n = static_cast<std::size_t>(m);
    const std::vector<double> basis = basis_matrix(m, head, start, row, value);
    const auto inverse = dense_inverse(basis, n, 1e-11);
    if (!inverse) continue;  // the extra entries can make it singular; the next test covers that
    ++inverted;
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t c = 0; c < n; ++c) {
        double sum = 0;
        for (std::size_t k = 0; k < n; ++k) sum += basis[r * n + k] * (*inverse)[k * n + c];
        EXPECT_NEAR(sum, r == c ? 1.0 : 0.0, 1e-9) << r << ", " << c;
      }
  }
  EXPECT_GE(inverted, 90);
}

TEST(DenseInverse, RefusesASingularBasis) {
  // Two columns with the same entries: rows 0 and 1 both 1.
  const std::vector<int> head{2, 3}, start{0, 2, 4}, row{0, 1, 0, 1};
  const std::vector<double> value{1, 1, 1, 1};
  EXPECT_FALSE(dense_inverse(basis_matrix(2, head, start, row, value), 2, 1e-11).has_value());
  // A swap of rows is needed, and found: [[0, 1], [1, 0]].
  const std::vector<int> swapped_head{1, 0};
  const auto inverse = dense_inverse(basis_matrix(2, swapped_head, {}, {}, {}), 2, 1e-11);
  ASSERT_TRUE(inverse.has_value());
  EXPECT_EQ(*inverse, (std::vector<double>{0, 1, 1, 0}));
}

}  // namespace
}  // namespace themis::arbiter
