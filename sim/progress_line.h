#pragma once
// themis-sim's progress line on stderr (shown only on a terminal, after a run has taken ~2 s): which run
// (the policy, and for a sweep the point, e.g. "themis f=0.8"), apps finished and virtual time. The line
// is rewritten in place and cleared when the run ends, so the terminal is left clean for the results.
#include <cstddef>
#include <string>

#include "core/ids.h"

namespace themis::sim {

// Carriage return and erase-to-end-of-line: rewrites or clears the line.
inline constexpr const char* kClearLine = "\r\x1b[K";

// "<label>: 37/100 apps finished, virtual time 12.3 h"
std::string progress_text(const std::string& label, Seconds now, std::size_t done, std::size_t total);

}  // namespace themis::sim
