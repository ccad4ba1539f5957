#include "sim/scenario.h"

#include <fstream>
#include <sstream>

namespace themis::sim {
namespace {

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

Scenario parse_scenario(std::string_view text, std::string_view source_name) {
  Scenario s;
  s.cluster.name = std::string(source_name);
  std::string apps;
  std::istringstream in{std::string(text)};
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = std::string(source_name) + ":" + std::to_string(line_no);
    if (line.rfind("cluster:", 0) == 0) {
      for (const std::string& m : words(line.substr(8))) {
        const auto eq = m.find('=');
        int gpus = 0;
        try {
          gpus = eq == std::string::npos ? 0 : std::stoi(m.substr(eq + 1));
        } catch (const std::exception&) {
          gpus = 0;
        }
        if (eq == 0 || gpus <= 0) throw TraceError(where + ": cluster: expected name=GPUs, got '" + m + "'");
        s.cluster.machines.push_back({m.substr(0, eq), "r0", {gpus}});
      }
      apps += "\n";
    } else if (line.rfind("policies:", 0) == 0) {
      s.policies = words(line.substr(9));
      apps += "\n";
    } else if (line.rfind("lease:", 0) == 0) {
      try {
        s.lease = std::stod(line.substr(6));
      } catch (const std::exception&) {
        s.lease = 0;
      }
      if (!(s.lease > 0)) throw TraceError(where + ": lease: must be a number of seconds > 0");
      apps += "\n";
    } else {
      apps += line + "\n";  // keeps line numbers for the trace parser
    }
  }
  if (s.cluster.machines.empty()) throw TraceError(std::string(source_name) + ":1: cluster: missing");
  if (s.policies.empty()) throw TraceError(std::string(source_name) + ":1: policies: missing");
  s.apps = parse_trace(apps, source_name);
  return s;
}

Scenario load_scenario(const std::filesystem::path& path) { return parse_scenario(read_trace_file(path), path.string()); }

std::vector<ExpectedJct> load_expected(const std::filesystem::path& path) {
  std::istringstream in(read_trace_file(path));
  std::vector<ExpectedJct> out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const auto w = words(line);
    if (w.empty() || w[0][0] == '#') continue;
    if (w.size() != 4 || w[2] != "jct")
      throw TraceError(path.string() + ":" + std::to_string(line_no) + ": line: expected '<policy> <app> jct <seconds>'");
    out.push_back({w[0], w[1], std::stod(w[3])});
  }
  return out;
}

}  // namespace themis::sim
