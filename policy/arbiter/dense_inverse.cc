#include "policy/arbiter/dense_inverse.h"

#include <algorithm>
#include <cmath>

namespace themis::arbiter {

std::optional<std::vector<double>> dense_inverse(std::vector<double> matrix, std::size_t m, double singular) {
  // [A | I] → [I | A⁻¹] by row operations.
  std::vector<double> inverse(m * m, 0.0);
  for (std::size_t i = 0; i < m; ++i) inverse[i * m + i] = 1.0;
  const auto row = [m](std::vector<double>& rows, std::size_t r) { return rows.begin() + static_cast<std::ptrdiff_t>(r * m); };
  for (std::size_t k = 0; k < m; ++k) {
    std::size_t pivot_row = k;
    for (std::size_t r = k + 1; r < m; ++r)
      if (std::abs(matrix[r * m + k]) > std::abs(matrix[pivot_row * m + k])) pivot_row = r;
    if (std::abs(matrix[pivot_row * m + k]) < singular) return std::nullopt;
    if (pivot_row != k) {
      std::swap_ranges(row(matrix, k), row(matrix, k + 1), row(matrix, pivot_row));
      std::swap_ranges(row(inverse, k), row(inverse, k + 1), row(inverse, pivot_row));
    }
    const double scale = 1.0 / matrix[k * m + k];
    for (std::size_t c = 0; c < m; ++c) {
      matrix[k * m + c] *= scale;
      inverse[k * m + c] *= scale;
    }
    for (std::size_t r = 0; r < m; ++r) {
      const double factor = matrix[r * m + k];
      if (r == k || factor == 0) continue;
      for (std::size_t c = 0; c < m; ++c) {
        matrix[r * m + c] -= factor * matrix[k * m + c];
        inverse[r * m + c] -= factor * inverse[k * m + c];
      }
    }
  }
  return inverse;
}

std::vector<double> basis_matrix(int m, std::span<const int> head, std::span<const int> start, std::span<const int> row,
                                 std::span<const double> value) {
  const auto size = static_cast<std::size_t>(m);
  std::vector<double> basis(size * size, 0.0);
  for (std::size_t i = 0; i < size; ++i) {
    const int j = head[i];
    if (j < m) {
      basis[static_cast<std::size_t>(j) * size + i] = 1.0;
      continue;
    }
    const auto c = static_cast<std::size_t>(j - m);
    for (auto e = static_cast<std::size_t>(start[c]); e < static_cast<std::size_t>(start[c + 1]); ++e)
      basis[static_cast<std::size_t>(row[e]) * size + i] += value[e];
  }
  return basis;
}

}  // namespace themis::arbiter
