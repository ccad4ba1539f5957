#include "sim/gavel_throughputs.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sim/trace.h"

namespace themis::sim {
namespace {

constexpr const char* kHeader =
    "job_type,model,batch_size,scale_factor,v100_steps_per_s,p100_steps_per_s,k80_steps_per_s,"
    "v100_unconsolidated_steps_per_s,p100_unconsolidated_steps_per_s,k80_unconsolidated_steps_per_s";

std::vector<std::string> split_commas(std::string_view line) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = line.find(',', pos);
    out.emplace_back(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

// Gavel leaves a cell empty, or writes 0.0, where it measured nothing (ResNet-50 at batch size 128 does
// not fit a K80); both read as 0, "not measured".
double steps_per_s(const std::string& text, const std::string& where, const char* field) {
  if (text.empty()) return 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v) || v < 0)
    throw TraceError(where + ": " + field + ": must be a number >= 0 or empty, got '" + text + "'");
  return v;
}

}  // namespace

std::string_view to_string(GavelGpu gpu) {
  switch (gpu) {
    case GavelGpu::kV100: return "v100";
    case GavelGpu::kP100: return "p100";
    case GavelGpu::kK80: return "k80";
  }
  return "?";
}

GavelGpu parse_gavel_gpu(std::string_view name) {
  if (name == "v100") return GavelGpu::kV100;
  if (name == "p100") return GavelGpu::kP100;
  if (name == "k80") return GavelGpu::kK80;
  throw std::invalid_argument("--gpu: must be v100, p100 or k80, got '" + std::string(name) + "'");
}

GavelThroughputs GavelThroughputs::parse(std::string_view text, std::string_view source_name) {
  static const char* const kFields[] = {"v100_steps_per_s", "p100_steps_per_s", "k80_steps_per_s",
                                        "v100_unconsolidated_steps_per_s", "p100_unconsolidated_steps_per_s",
                                        "k80_unconsolidated_steps_per_s"};
  GavelThroughputs table;
  std::istringstream in{std::string(text)};
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = std::string(source_name) + ":" + std::to_string(line_no);
    if (line_no == 1) {
      if (line != kHeader) throw TraceError(where + ": header: expected '" + kHeader + "'");
      continue;
    }
    if (line.empty()) continue;
    const auto f = split_commas(line);
    if (f.size() != 10) throw TraceError(where + ": row: expected 10 comma-separated fields, got " + std::to_string(f.size()));
    if (f[0].empty()) throw TraceError(where + ": job_type: must not be empty");
    char* end = nullptr;
    const long scale = std::strtol(f[3].c_str(), &end, 10);
    if (f[3].empty() || end != f[3].c_str() + f[3].size() || scale <= 0 || scale > 1 << 20)
      throw TraceError(where + ": scale_factor: must be a positive integer, got '" + f[3] + "'");
    GavelThroughput t;
    for (int g = 0; g < 3; ++g) {
      t.consolidated[g] = steps_per_s(f[4 + g], where, kFields[g]);
      t.unconsolidated[g] = steps_per_s(f[7 + g], where, kFields[3 + g]);
    }
    if (!table.rows_.emplace(std::make_pair(f[0], static_cast<int>(scale)), t).second)
      throw TraceError(where + ": job_type: duplicate row for '" + f[0] + "' at scale factor " + f[3]);
  }
  if (line_no == 0) throw TraceError(std::string(source_name) + ":1: header: empty file");
  if (table.rows_.empty()) throw TraceError(std::string(source_name) + ":1: rows: no throughputs");
  return table;
}

GavelThroughputs GavelThroughputs::load(const std::filesystem::path& path) {
  return parse(read_trace_file(path), path.string());
}

const GavelThroughput* GavelThroughputs::find(const std::string& job_type, int scale_factor) const {
  const auto it = rows_.find({job_type, scale_factor});
  return it == rows_.end() ? nullptr : &it->second;
}

bool GavelThroughputs::knows_job_type(const std::string& job_type) const {
  const auto it = rows_.lower_bound({job_type, 0});
  return it != rows_.end() && it->first.first == job_type;
}

std::filesystem::path default_gavel_throughputs_csv() {
  if (const char* env = std::getenv("THEMIS_GAVEL_THROUGHPUTS_CSV")) return env;
  return "/work/shared/traces/gavel/derived/job_table_simulation_throughputs.csv";
}

}  // namespace themis::sim
