#include "sim/workload.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include "core/rng.h"
#include "core/topology.h"
#include "sim/model_catalog.h"

namespace themis::sim {
namespace {

constexpr Seconds kTwoWeeks = 14 * 24 * 3600.0;
// Philly rows shorter than one 10-minute lease are left out: the paper's apps run for hours (its
// 35 s container start is "0.2% of the app duration at the median", i.e. a median app of ~4.9 h),
// and a job shorter than a lease measures the lease, not the policy.
constexpr Seconds kMinJobSeconds = 600;

Seconds parse_timestamp(const std::string& text, const std::string& where) {
  std::tm tm{};
  int year = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%d %d:%d:%d", &year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec) != 6)
    throw TraceError(where + ": timestamp: expected YYYY-MM-DD HH:MM:SS, got '" + text + "'");
  tm.tm_year = year - 1900;
  tm.tm_mon -= 1;
  return static_cast<Seconds>(timegm(&tm));
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = line.find(',', pos);
    out.push_back(line.substr(pos, comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

const std::vector<const ModelInfo*>& models_of(ModelCategory c) {
  static std::vector<const ModelInfo*> by[3];
  if (by[0].empty())
    for (const ModelInfo& m : model_catalog()) by[static_cast<int>(m.category)].push_back(&m);
  return by[static_cast<int>(c)];
}

bool network_intensive(const ModelInfo& m) { return m.slowdown[static_cast<std::size_t>(Locality::kSameRack)] >= 1.15; }
bool compute_intensive(const ModelInfo& m) { return m.slowdown[static_cast<std::size_t>(Locality::kCrossRack)] <= 1.0; }

LossCurve draw_loss(Rng& rng) { return {1.0 + rng.uniform(), 0.3 + 0.4 * rng.uniform(), 0.1 * rng.uniform()}; }

// Arrival offsets (rebased to 0, sorted) of `n` Philly submissions from one two-week window.
std::vector<Seconds> draw_arrivals(const std::vector<PhillyJob>& philly, int n, Rng& rng) {
  Seconds first = philly.front().submit;
  Seconds last = first;
  for (const PhillyJob& j : philly) {
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
  }
  const Seconds span = std::max(0.0, last - first - kTwoWeeks);
  const Seconds start = first + std::floor(rng.uniform() * span);
  std::vector<Seconds> window;
  for (const PhillyJob& j : philly)
    if (j.submit >= start && j.submit < start + kTwoWeeks) window.push_back(j.submit - start);
  std::sort(window.begin(), window.end());
  std::vector<Seconds> out;
  for (int k = 0; k < n && !window.empty(); ++k) out.push_back(window[rng.below(window.size())]);
  std::sort(out.begin(), out.end());
  const Seconds base = out.empty() ? 0 : out.front();
  for (Seconds& t : out) t -= base;
  return out;
}

const PhillyJob& draw_small_job(const std::vector<const PhillyJob*>& small, Rng& rng) {
  return *small[rng.below(small.size())];
}

// Compresses arrivals so that the offered work is `load` times the cluster's capacity over the window.
void fit_load(std::vector<AppSpec>& apps, const WorkloadOptions& o) {
  double work = 0;
  Seconds span = 0;
  for (const AppSpec& a : apps) {
    span = std::max(span, a.arrival);
    for (const JobSpec& j : a.jobs) work += j.serial_iter_time * static_cast<double>(j.iterations);
  }
  if (span <= 0) return;
  const Seconds target = work / (o.cluster_gpus * o.load);
  for (AppSpec& a : apps) a.arrival = std::round(a.arrival * target / span);
}

std::vector<const PhillyJob*> small_jobs(const std::vector<PhillyJob>& philly) {
  std::vector<const PhillyJob*> small;
  for (const PhillyJob& j : philly)
    if (j.gpus <= 2 && j.duration >= kMinJobSeconds) small.push_back(&j);
  if (small.empty()) throw TraceError("philly: jobs: no rows with 1-2 GPUs and >= 600 s");
  return small;
}

}  // namespace

const ModelInfo& draw_model(Rng& rng, double network_fraction) {
  if (network_fraction >= 0) {
    const bool net = rng.uniform() < network_fraction;
    std::vector<const ModelInfo*> pick;
    for (const ModelInfo& m : model_catalog())
      if (net ? network_intensive(m) : compute_intensive(m)) pick.push_back(&m);
    return *pick[rng.below(pick.size())];
  }
  const double u = rng.uniform();
  const ModelCategory c = u < 0.1 ? ModelCategory::kCV : (u < 0.7 ? ModelCategory::kNLP : ModelCategory::kSpeech);
  const auto& ms = models_of(c);
  return *ms[rng.below(ms.size())];
}

std::vector<PhillyJob> load_philly_csv(const std::filesystem::path& path) {
  check_readable_file(path);
  std::ifstream in(path);
  if (!in) throw TraceError(path.string() + ":0: file: cannot open");
  std::vector<PhillyJob> out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1 || line.empty()) continue;
    const std::string where = path.string() + ":" + std::to_string(line_no);
    const auto f = split(line);
    if (f.size() < 3) throw TraceError(where + ": row: expected timestamp,duration,num_gpus,...");
    PhillyJob job;
    job.submit = parse_timestamp(f[0], where);
    char* end = nullptr;
    job.duration = std::strtod(f[1].c_str(), &end);
    if (end == f[1].c_str() || !(job.duration >= 0)) throw TraceError(where + ": duration: must be a number >= 0");
    const long gpus = std::strtol(f[2].c_str(), &end, 10);
    if (end == f[2].c_str() || gpus <= 0) throw TraceError(where + ": num_gpus: must be a positive integer");
    job.gpus = static_cast<int>(gpus);
    out.push_back(job);
  }
  if (out.empty()) throw TraceError(path.string() + ":1: rows: no jobs");
  return out;
}

std::vector<AppSpec> workload1(const std::vector<PhillyJob>& philly, const WorkloadOptions& o) {
  Rng arrivals_rng(o.seed);
  Rng rng(o.seed * 7919 + 1);
  const auto small = small_jobs(philly);
  const auto arrivals = draw_arrivals(philly, o.apps, arrivals_rng);
  std::vector<AppSpec> apps;
  for (std::size_t k = 0; k < arrivals.size(); ++k) {
    AppSpec app;
    app.name = "w1-" + std::to_string(k);
    app.arrival = arrivals[k];
    const int full = rng.uniform() < 0.1 ? 1 : 50 + static_cast<int>(rng.below(51));
    const int n = full == 1 ? 1 : std::max(2, static_cast<int>(std::lround(full / static_cast<double>(o.job_divisor))));
    const ModelInfo& model = draw_model(rng, o.network_fraction);
    // The jobs of one exploration train one model on one data set with different hyper-parameters:
    // one Philly row sets the app's job length (its serial GPU-seconds, clipped, as iterations of
    // about a second) and each job runs that many iterations at its own serial iteration time (U[0.8, 1.2] s), so the jobs' lengths
    // differ by ±20% and each job takes 1 or 2 GPUs as in Philly's 1-2 GPU rows.
    const PhillyJob& base = draw_small_job(small, rng);
    const Seconds base_work = std::min(base.duration * base.gpus, o.max_job_seconds);
    for (int j = 0; j < n; ++j) {
      JobSpec job;
      job.model = model.name;
      job.slowdown = model.slowdown;
      job.gpus = draw_small_job(small, rng).gpus;  // Philly's mix of 1- and 2-GPU jobs
      job.serial_iter_time = std::round((0.8 + 0.4 * rng.uniform()) * 100) / 100;
      job.iterations = std::max<long long>(1, std::llround(base_work));
      job.loss = draw_loss(rng);
      app.jobs.push_back(job);
    }
    apps.push_back(std::move(app));
  }
  fit_load(apps, o);
  return apps;
}

std::vector<AppSpec> workload2(const std::vector<PhillyJob>& philly, const WorkloadOptions& o) {
  Rng arrivals_rng(o.seed);
  Rng rng(o.seed * 7919 + 2);
  const auto small = small_jobs(philly);
  const auto arrivals = draw_arrivals(philly, o.apps, arrivals_rng);
  std::vector<AppSpec> apps;
  for (std::size_t k = 0; k < arrivals.size(); ++k) {
    AppSpec app;
    app.name = "w2-" + std::to_string(k);
    app.arrival = arrivals[k];
    app.scheme = HyperScheme::kSuccessiveHalving;
    app.max_job_gpus = 8;
    const int n = 4 << rng.below(3);  // 4, 8 or 16 jobs: 3 to 5 phases
    const int base_gpus = 1 + static_cast<int>(rng.below(2));
    const ModelInfo& model = draw_model(rng, o.network_fraction);
    int phases = 1;
    for (int m = n; m > 1; m /= 2) ++phases;
    // Successive halving runs every job of a phase for the same number of iterations I: one Philly job
    // sets the app's per-job work, spread over the phases; hyper-parameters vary the iteration time.
    const PhillyJob& p = draw_small_job(small, rng);
    const Seconds work = std::min(p.duration * p.gpus, o.max_job_seconds) / phases;
    const long long iterations = std::max<long long>(1, std::llround(work));
    for (int j = 0; j < n; ++j) {
      JobSpec job;
      job.model = model.name;
      job.slowdown = model.slowdown;
      job.gpus = base_gpus;
      job.serial_iter_time = std::round((0.8 + 0.4 * rng.uniform()) * 100) / 100;
      job.iterations = iterations;
      job.loss = draw_loss(rng);
      app.jobs.push_back(job);
    }
    apps.push_back(std::move(app));
  }
  if (o.w2_arrivals_from_w1) {
    // The same window and sample of Philly submissions, compressed to Workload 1's work.
    const auto w1 = workload1(philly, o);
    for (std::size_t k = 0; k < apps.size() && k < w1.size(); ++k) apps[k].arrival = w1[k].arrival;
  } else {
    fit_load(apps, o);
  }
  return apps;
}

std::filesystem::path default_philly_csv() {
  if (const char* env = std::getenv("THEMIS_PHILLY_CSV")) return env;
#ifdef THEMIS_SHARED_TRACES
  return std::filesystem::path(THEMIS_SHARED_TRACES) / "pollux-adaptdl/simulator/traces/philly.csv";
#else
  return "/work/shared/traces/pollux-adaptdl/simulator/traces/philly.csv";
#endif
}

}  // namespace themis::sim
