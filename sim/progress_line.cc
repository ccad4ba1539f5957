#include "sim/progress_line.h"

#include <cstdio>

namespace themis::sim {

std::string progress_text(const std::string& label, Seconds now, std::size_t done, std::size_t total) {
  char buf[96];
  std::snprintf(buf, sizeof buf, ": %zu/%zu apps finished, virtual time %.1f h", done, total, now / 3600);
  return label + buf;
}

}  // namespace themis::sim
