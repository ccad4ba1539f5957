#pragma once
// Small pieces shared by the benchmarks: loopback ports, config files, process memory and percentile lines for
// those that run real coordinator and nodelet processes; comma lists for command lines.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace themis::bench {

// For an argument no flag of `tool` matched: --help or -h prints `usage` on standard output and gives exit code 0;
// anything else is named on standard error, above `usage`, with exit code 2. The caller returns the code.
inline int usage_for(std::string_view tool, std::string_view arg, std::string_view usage) {
  if (arg == "--help" || arg == "-h") {
    std::printf("%.*s", static_cast<int>(usage.size()), usage.data());
    return 0;
  }
  std::fprintf(stderr, "%.*s: unknown argument '%.*s'\n%.*s", static_cast<int>(tool.size()), tool.data(),
               static_cast<int>(arg.size()), arg.data(), static_cast<int>(usage.size()), usage.data());
  return 2;
}

// The arguments of a tool that takes `least` to `most` of them and no flags, into `args`; -1 when they are such, else
// the exit code to return (--help: 0 after the usage; a flag or too few or many: 2 after saying so).
inline int positional_args(std::string_view tool, std::string_view usage, int argc, char** argv, std::size_t least,
                           std::size_t most, std::vector<std::string>& args) {
  args.assign(argv + 1, argv + argc);
  for (const std::string& arg : args)
    if (arg.starts_with("-")) return usage_for(tool, arg, usage);
  if (args.size() >= least && args.size() <= most) return -1;
  std::fprintf(stderr, "%.*s", static_cast<int>(usage.size()), usage.data());
  return 2;
}

// A whole decimal number of at least `least` ("12"), else std::invalid_argument naming `what` and the text.
inline int whole_number_at_least(std::string_view what, const std::string& text, int least) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || value < least)
    throw std::invalid_argument(std::string(what) + (least == 1 ? " must be a positive whole number" : " must be a whole number of at least " + std::to_string(least)) + ", got '" + text + "'");
  return value;
}
inline int positive_int(std::string_view what, const std::string& text) { return whole_number_at_least(what, text, 1); }
inline int non_negative_int(std::string_view what, const std::string& text) { return whole_number_at_least(what, text, 0); }

// "a,b,c" as its parts, empty ones kept (so that a stray comma meets the caller's check of each name).
inline std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t comma = std::min(text.find(',', from), text.size());
    parts.emplace_back(text.substr(from, comma - from));
    from = comma + 1;
  }
  return parts;
}

inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

// A nodelet's `slots` value: GPUs 0..gpus-1 in slots of two.
inline std::string slots_toml(int gpus) {
  std::string slots = "[[";
  for (int g = 0; g < gpus; ++g) {
    if (g > 0 && g % 2 == 0) slots += "], [";
    else if (g > 0) slots += ", ";
    slots += std::to_string(g);
  }
  return slots + "]]";
}

inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double rank = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

// One line "what  p50 …  p95 …  max … unit  (n=…)".
inline void print_distribution(const char* what, const std::vector<double>& v, const char* unit) {
  std::printf("%-34s p50 %9.1f  p95 %9.1f  max %9.1f %s  (n=%zu)\n", what, percentile(v, 0.5), percentile(v, 0.95),
              v.empty() ? std::nan("") : *std::max_element(v.begin(), v.end()), unit, v.size());
}

// A field of /proc/<pid>/status in KiB ("VmRSS", "VmHWM"); 0 when the process is gone.
inline long proc_status_kib(pid_t pid, const std::string& field = "VmRSS") {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return 0;
}

// Polls `query` (one number from the coordinator's database) until `nodelets` hosts are up. Throws when the
// coordinator exits (its log is in `dir`) or 120 s pass.
template <class Query, class Process>
void wait_for_nodelets(const Query& query, int nodelets, Process& coordinator, const std::string& dir) {
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    double up = 0;
    try {
      up = query("SELECT count(*) FROM hosts WHERE state = 'up'");
    } catch (const std::exception&) {
      // the coordinator has not created its database yet
    }
    if (static_cast<int>(up) == nodelets) return;
    if (!coordinator.running()) throw std::runtime_error("coordinator exited; see " + dir + "/coordinator.log");
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(120)) {
      throw std::runtime_error("only " + std::to_string(up) + " nodelets registered in 120 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace themis::bench
