#include "sim/gavel_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace themis::sim {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& field, const std::string& reason) {
  throw TraceError(where + ": " + field + ": " + reason);
}

std::vector<std::string> split_tabs(std::string_view line) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t tab = line.find('\t', pos);
    out.emplace_back(line.substr(pos, tab == std::string_view::npos ? std::string_view::npos : tab - pos));
    if (tab == std::string_view::npos) break;
    pos = tab + 1;
  }
  return out;
}

double number(const std::string& text, const std::string& where, const char* field) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    fail(where, field, "must be a number, got '" + text + "'");
  return v;
}

long long integer(const std::string& text, const std::string& where, const char* field) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size()) fail(where, field, "must be an integer, got '" + text + "'");
  return v;
}

int scale_factor(const std::string& text, const std::string& where) {
  const long long v = integer(text, where, "scale_factor");
  if (v <= 0 || v > 1 << 20) fail(where, "scale_factor", "must be a positive GPU count, got '" + text + "'");
  return static_cast<int>(v);
}

GavelJob parse_line(const std::vector<std::string>& f, const std::string& where) {
  GavelJob job;
  const bool physical = f.size() == 10;
  job.job_type = f[0];
  if (job.job_type.empty()) fail(where, "job_type", "must not be empty");
  job.command = f[1];
  if (physical) job.working_directory = f[2];
  const std::size_t o = physical ? 1 : 0;  // the msr format has no working_directory
  job.num_steps_arg = f[2 + o];
  const long long needs = integer(f[3 + o], where, "needs_data_dir");
  if (needs != 0 && needs != 1) fail(where, "needs_data_dir", "must be 0 or 1, got '" + f[3 + o] + "'");
  job.needs_data_dir = needs == 1;
  job.total_steps = integer(f[4 + o], where, "total_steps");
  if (job.total_steps <= 0) fail(where, "total_steps", "must be > 0, got '" + f[4 + o] + "'");
  if (physical) {
    job.scale_factor = scale_factor(f[6], where);
    job.priority_weight = number(f[7], where, "priority_weight");
    if (job.priority_weight <= 0) fail(where, "priority_weight", "must be > 0, got '" + f[7] + "'");
    job.slo = number(f[8], where, "SLO");
    job.arrival = number(f[9], where, "arrival_time");
  } else {
    job.arrival = number(f[5], where, "arrival_time");
    job.scale_factor = scale_factor(f[6], where);
  }
  if (job.arrival < 0) fail(where, "arrival_time", "must be >= 0");
  return job;
}

// Gavel's physical-cluster commands per job family ("ResNet-50" of "ResNet-50 (batch size 64)").
// {bs} stands for the batch size; %s is Gavel's data-directory placeholder, left as is.
struct GavelCommand {
  const char* family;
  const char* command;
  const char* working_directory;
  const char* num_steps_arg;
  bool needs_data_dir;
};

constexpr GavelCommand kCommands[] = {
    {"ResNet-18", "python3 main.py --data_dir=%s/cifar10 --batch_size {bs}", "image_classification/cifar10",
     "--num_steps", true},
    {"ResNet-50", "python3 main.py -j 8 -a resnet50 -b {bs} %s/imagenet/", "image_classification/imagenet",
     "--num_minibatches", true},
    {"Transformer", "python3 train.py -data %s/translation/multi30k.atok.low.pt -batch_size {bs} -proj_share_weight",
     "translation", "-step", true},
    {"LM", "python main.py --cuda --data %s/wikitext2 --batch_size {bs}", "language_modeling", "--steps", true},
    {"Recommendation", "python3 train.py --data_dir %s/ml-20m/pro_sg/ --batch_size {bs}", "recommendation", "-n",
     true},
    {"A3C", "python3 main.py --env PongDeterministic-v4 --workers 4 --amsgrad True", "rl", "--max-steps", false},
    {"CycleGAN", "python3 cyclegan.py --dataset_path %s/monet2photo --decay_epoch 0", "cyclegan", "--n_steps", true},
};

const GavelCommand* command_of(const std::string& job_type, std::string& batch_size) {
  const std::size_t paren = job_type.find(" (batch size ");
  const std::string family = job_type.substr(0, paren);
  batch_size.clear();
  if (paren != std::string::npos) {
    const std::size_t start = paren + 13;
    const std::size_t close = job_type.find(')', start);
    if (close == std::string::npos) return nullptr;
    batch_size = job_type.substr(start, close - start);
  }
  for (const GavelCommand& c : kCommands)
    if (family == c.family) return &c;
  return nullptr;
}

std::string format_number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6f", v);
  return buffer;
}

}  // namespace

std::vector<GavelJob> parse_gavel_trace(std::string_view text, std::string_view source_name) {
  std::vector<GavelJob> jobs;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const std::string where = std::string(source_name) + ":" + std::to_string(line_no);
    const auto fields = split_tabs(line);
    if (fields.size() != 10 && fields.size() != 7)
      fail(where, "row", "expected 10 tab-separated fields (physical_cluster) or 7 (msr), got " +
                             std::to_string(fields.size()));
    GavelJob job = parse_line(fields, where);
    job.line = line_no;
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) throw TraceError(std::string(source_name) + ":1: trace: no jobs");
  return jobs;
}

std::vector<GavelJob> load_gavel_trace(const std::filesystem::path& path) {
  return parse_gavel_trace(read_trace_file(path), path.string());
}

GavelImport gavel_to_apps(const std::vector<GavelJob>& jobs, const GavelThroughputs& throughputs,
                          const GavelImportOptions& options, std::string_view source_name) {
  GavelImport out;
  std::map<std::string, long long> dropped;
  std::vector<const GavelJob*> kept;
  for (const GavelJob& job : jobs) {
    if (!throughputs.knows_job_type(job.job_type))
      fail(std::string(source_name) + ":" + std::to_string(job.line), "job_type",
           "'" + job.job_type + "' is not in Gavel's throughput table");
    const GavelThroughput* t = throughputs.find(job.job_type, job.scale_factor);
    if (t == nullptr || t->consolidated[static_cast<std::size_t>(options.gpu)] <= 0) {
      ++dropped[job.job_type + " at scale factor " + std::to_string(job.scale_factor)];
      ++out.dropped;
      continue;
    }
    kept.push_back(&job);
  }
  for (const auto& [kind, count] : dropped) out.dropped_kinds.push_back(kind + ": " + std::to_string(count));
  std::stable_sort(kept.begin(), kept.end(), [](const GavelJob* a, const GavelJob* b) { return a->arrival < b->arrival; });
  if (options.max_jobs > 0 && static_cast<long long>(kept.size()) > options.max_jobs)
    kept.resize(static_cast<std::size_t>(options.max_jobs));
  if (kept.empty()) return out;
  out.rebased_by = kept.front()->arrival;
  const auto gpu = static_cast<std::size_t>(options.gpu);
  for (const GavelJob* job : kept) {
    const GavelThroughput& t = *throughputs.find(job->job_type, job->scale_factor);
    JobSpec spec;
    spec.model = job->job_type;
    spec.gpus = job->scale_factor;
    spec.iterations = job->total_steps;
    spec.serial_iter_time = job->scale_factor / t.consolidated[gpu];
    // Where Gavel did not measure the spread placement, the job is taken as insensitive to it.
    const double cross_machine = job->scale_factor > 1 && t.unconsolidated[gpu] > 0
                                     ? std::max(1.0, t.consolidated[gpu] / t.unconsolidated[gpu])
                                     : 1.0;
    spec.slowdown = {1.0, 1.0, cross_machine, 1.0 + 3.0 * (cross_machine - 1.0)};
    AppSpec app;
    app.name = options.name_prefix + std::to_string(job->line);
    app.arrival = job->arrival - out.rebased_by;
    app.jobs.push_back(std::move(spec));
    out.apps.push_back(std::move(app));
  }
  return out;
}

std::string apps_to_gavel(const std::vector<AppSpec>& apps, const GavelThroughputs& throughputs) {
  std::string out;
  for (const AppSpec& app : apps) {
    if (app.scheme != HyperScheme::kSingle)
      throw TraceError("app '" + app.name + "': scheme: successive halving has no Gavel equivalent");
    for (std::size_t k = 0; k < app.jobs.size(); ++k) {
      const JobSpec& job = app.jobs[k];
      const std::string where = "app '" + app.name + "': jobs[" + std::to_string(k) + "]";
      std::string batch_size;
      const GavelCommand* c = command_of(job.model, batch_size);
      if (c == nullptr || !throughputs.knows_job_type(job.model))
        throw TraceError(where + ".model: '" + job.model +
                         "' is not a Gavel job type (such as 'ResNet-50 (batch size 64)')");
      if (throughputs.find(job.model, job.gpus) == nullptr)
        throw TraceError(where + ".gpus: Gavel has no throughput for '" + job.model + "' at scale factor " +
                         std::to_string(job.gpus));
      std::string command = c->command;
      if (const auto at = command.find("{bs}"); at != std::string::npos) command.replace(at, 4, batch_size);
      out += job.model + "\t" + command + "\t" + c->working_directory + "\t" + c->num_steps_arg + "\t" +
             (c->needs_data_dir ? "1" : "0") + "\t" + std::to_string(job.iterations) + "\t" +
             std::to_string(job.gpus) + "\t1\t-1.000000\t" + format_number(app.arrival) + "\n";
    }
  }
  return out;
}

}  // namespace themis::sim
