#include "sim/itp_trace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "core/rng.h"
#include "sim/workload.h"

namespace themis::sim {
namespace {

constexpr std::string_view kHeader = "job_id,submission_time,duration,num_gpu";

[[noreturn]] void fail(const std::string& where, const std::string& field, const std::string& reason) {
  throw TraceError(where + ": " + field + ": " + reason);
}

double seconds(const std::string& text, const std::string& where, const char* field) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0)
    fail(where, field, "must be a number of seconds >= 0, got '" + text + "'");
  return v;
}

}  // namespace

std::vector<ItpJob> parse_itp_csv(std::string_view text, std::string_view source_name) {
  std::vector<ItpJob> jobs;
  std::map<std::string, int> seen;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = std::string(source_name) + ":" + std::to_string(line_no);
    if (line_no == 1) {
      if (line != kHeader) fail(where, "header", "expected '" + std::string(kHeader) + "'");
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = line.find(',', start);
      f.emplace_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (f.size() != 4) fail(where, "row", "expected 4 comma-separated fields, got " + std::to_string(f.size()));
    ItpJob job;
    job.id = f[0];
    if (job.id.empty()) fail(where, "job_id", "must not be empty");
    if (const auto [it, fresh] = seen.emplace(job.id, line_no); !fresh)
      fail(where, "job_id", "duplicate '" + job.id + "' (first on line " + std::to_string(it->second) + ")");
    job.submit = seconds(f[1], where, "submission_time");
    job.duration = seconds(f[2], where, "duration");
    if (job.duration <= 0) fail(where, "duration", "must be > 0");
    char* end_ptr = nullptr;
    const long gpus = std::strtol(f[3].c_str(), &end_ptr, 10);
    if (f[3].empty() || end_ptr != f[3].c_str() + f[3].size() || gpus <= 0 || gpus > 1 << 20)
      fail(where, "num_gpu", "must be a positive integer, got '" + f[3] + "'");
    job.gpus = static_cast<int>(gpus);
    job.line = line_no;
    jobs.push_back(std::move(job));
  }
  if (line_no == 0) throw TraceError(std::string(source_name) + ":1: header: empty file");
  if (jobs.empty()) throw TraceError(std::string(source_name) + ":2: trace: no jobs");
  return jobs;
}

std::vector<ItpJob> load_itp_csv(const std::filesystem::path& path) { return parse_itp_csv(read_trace_file(path), path.string()); }

ItpImport itp_to_apps(const std::vector<ItpJob>& jobs, const ItpImportOptions& options) {
  std::vector<const ItpJob*> kept;
  for (const ItpJob& job : jobs)
    if (job.submit >= options.from_time && (options.until_time < 0 || job.submit < options.until_time))
      kept.push_back(&job);
  // The source files are not sorted by submission; the line breaks ties so the order is total.
  std::sort(kept.begin(), kept.end(), [](const ItpJob* a, const ItpJob* b) {
    return a->submit != b->submit ? a->submit < b->submit : a->line < b->line;
  });
  if (options.max_jobs > 0 && static_cast<long long>(kept.size()) > options.max_jobs)
    kept.resize(static_cast<std::size_t>(options.max_jobs));
  ItpImport out;
  if (kept.empty()) return out;
  out.rebased_by = kept.front()->submit;
  Rng rng(options.seed * 7919 + 3);
  for (const ItpJob* job : kept) {
    const ModelInfo& model = draw_model(rng, options.network_fraction);
    JobSpec spec;
    spec.model = model.name;
    spec.slowdown = model.slowdown;
    spec.gpus = job->gpus;
    spec.serial_iter_time = 1.0;
    spec.iterations = std::max<long long>(1, std::llround(job->duration * job->gpus));
    AppSpec app;
    app.name = job->id;
    app.arrival = job->submit - out.rebased_by;
    app.jobs.push_back(std::move(spec));
    out.apps.push_back(std::move(app));
  }
  return out;
}

}  // namespace themis::sim
