#pragma once
// The inverse of a small dense basis, for the simplex codes that keep B⁻¹ whole (master_lp.h, dense_dual_lp.h) and
// rebuild it where updates have drifted.
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace themis::arbiter {

// The inverse of the m×m matrix `matrix` (row-major), row-major, by Gauss-Jordan elimination with partial pivoting;
// nothing where a pivot is smaller than `singular` in magnitude.
std::optional<std::vector<double>> dense_inverse(std::vector<double> matrix, std::size_t m, double singular);

// The basis B, row-major (entry (row, position)), of an LP whose variables are a slack per row (0 .. m − 1) and then
// columns stored compressed (column c: entries [start[c], start[c + 1]) of row / value); head[i] is the variable
// basic in position i.
std::vector<double> basis_matrix(int m, std::span<const int> head, std::span<const int> start, std::span<const int> row,
                                 std::span<const double> value);

}  // namespace themis::arbiter
