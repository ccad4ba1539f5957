#include "ctl/command_line.h"

#include <cmath>
#include <cstdlib>

namespace themis::ctl {

namespace {

OutputFormat output_format(const std::string& value) {
  if (value == "json") return OutputFormat::kJson;
  if (value == "wide") return OutputFormat::kWide;
  if (value == "table") return OutputFormat::kTable;
  throw std::invalid_argument("-o/--output: '" + value + "' is not an output format; use json, wide or table");
}

// A watch interval: a positive number of seconds.
std::optional<double> seconds(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

GlobalFlags take_global_flags(const std::vector<std::string>& argv) {
  GlobalFlags flags;
  bool after_dashdash = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (i == 0 || after_dashdash) {
      flags.rest.push_back(a);
      continue;
    }
    if (a == "--") {
      after_dashdash = true;
      flags.rest.push_back(a);
      continue;
    }
    if (a == "--json") {
      flags.output = OutputFormat::kJson;
    } else if (a == "-o" || a == "--output") {
      if (i + 1 >= argv.size()) throw std::invalid_argument(a + " needs a value: json, wide or table");
      flags.output = output_format(argv[++i]);
    } else if (a.rfind("--output=", 0) == 0) {
      flags.output = output_format(a.substr(9));
    } else if (a.size() > 2 && a.rfind("-o", 0) == 0 && a[2] != '-') {
      flags.output = output_format(a[2] == '=' ? a.substr(3) : a.substr(2));
    } else if (a == "-w" || a == "--watch") {
      flags.watch_seconds = kDefaultWatchSeconds;
      if (i + 1 < argv.size()) {
        if (const auto s = seconds(argv[i + 1])) {
          if (*s <= 0) throw std::invalid_argument(a + ": the interval must be more than 0 seconds, not " + argv[i + 1]);
          flags.watch_seconds = *s;
          ++i;
        }
      }
    } else if (a.rfind("--watch=", 0) == 0) {
      const auto s = seconds(a.substr(8));
      if (!s || *s <= 0) throw std::invalid_argument("--watch: '" + a.substr(8) + "' is not a number of seconds more than 0");
      flags.watch_seconds = *s;
    } else {
      flags.rest.push_back(a);
    }
  }
  return flags;
}

JobName parse_job_name(const std::string& text) {
  auto number = [&](const std::string& part) -> std::int64_t {
    if (part.empty() || part.size() > 18 || part.find_first_not_of("0123456789") != std::string::npos) {
      throw std::invalid_argument("'" + text + "' is not APP or APP/JOB (e.g. 12 or 12/3)");
    }
    return std::stoll(part);
  };
  const auto cut = text.find_first_of("/_");
  if (cut == std::string::npos) return {number(text), 0};
  return {number(text.substr(0, cut)), number(text.substr(cut + 1))};
}

}  // namespace themis::ctl
