#pragma once
// Small helpers that reject bad inputs with a message naming the field, e.g.
// "single-job app: serial_iter_time must be > 0 and finite, got -1".
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace themis::bidder::detail {

inline std::string format_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

[[noreturn]] inline void reject(std::string_view where, std::string_view field, std::string_view rule,
                                double got) {
  throw std::invalid_argument(std::string(where) + ": " + std::string(field) + " must be " +
                              std::string(rule) + ", got " + format_number(got));
}

inline void require_positive(std::string_view where, std::string_view field, double v) {
  if (!(std::isfinite(v) && v > 0)) reject(where, field, "> 0 and finite", v);
}
inline void require_non_negative(std::string_view where, std::string_view field, double v) {
  if (!(std::isfinite(v) && v >= 0)) reject(where, field, ">= 0 and finite", v);
}
inline void require_at_least(std::string_view where, std::string_view field, double v, double min) {
  if (!(std::isfinite(v) && v >= min)) reject(where, field, ">= " + format_number(min) + " and finite", v);
}

}  // namespace themis::bidder::detail
