// Fuzzes the simulator's JSONL trace reader (sim/trace.h). A rejected trace must throw TraceError only;
// an accepted one must round-trip through trace_to_jsonl unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sim/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<themis::sim::AppSpec> apps;
  try {
    apps = themis::sim::parse_trace(text, "fuzz.jsonl");
  } catch (const themis::sim::TraceError&) {
    return 0;
  }
  const std::string once = themis::sim::trace_to_jsonl(apps);
  const std::string twice = themis::sim::trace_to_jsonl(themis::sim::parse_trace(once, "round-trip.jsonl"));
  if (once != twice) std::abort();  // an accepted trace must survive its own writer
  return 0;
}
