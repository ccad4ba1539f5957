#pragma once
// Flags themisctl takes anywhere on its command line, before or after the subcommand (kubectl style):
// `-o json|wide` (also `-ojson`, `--output json`, `--output=json`), `--json` (the same as `-o json`) and
// `-w/--watch [SECONDS]`. They are taken out of argv before CLI11 parses the rest.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace themis::ctl {

enum class OutputFormat { kTable, kWide, kJson };

struct GlobalFlags {
  OutputFormat output = OutputFormat::kTable;
  std::optional<double> watch_seconds;  // set: redraw every so many seconds
  std::vector<std::string> rest;        // argv without them, argv[0] first
};

constexpr double kDefaultWatchSeconds = 2;

// Throws std::invalid_argument naming the flag and the value on a bad output format or watch interval.
GlobalFlags take_global_flags(const std::vector<std::string>& argv);

// `themisctl logs APP[/JOB]`: "12" (job 0), "12/3" or "12_3" (as explain and show name jobs).
struct JobName {
  std::int64_t app = 0;
  std::int64_t job = 0;
};
// Throws std::invalid_argument quoting the text.
JobName parse_job_name(const std::string& text);

}  // namespace themis::ctl
