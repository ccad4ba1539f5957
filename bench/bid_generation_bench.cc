// Time of one bid (generate_bid with an Eq. 1 valuation) over random offers, per offer size and cluster.
// Every call is timed on its own, in wall-clock time and in the thread's CPU time (which leaves out
// time the thread spent preempted on a busy machine); the p50 and p95 over all calls are reported as
// counters in µs.
//   build/bin/bid_generation_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "bidder/bid_generator.h"
#include "bidder/single_job.h"
#include "bidder/slowdown.h"
#include "core/cluster_presets.h"
#include "core/rng.h"
#include "core/topology.h"

namespace themis::bidder {
namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double percentile(std::vector<double>& v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

// 1024 GPUs: 128 machines of 8 GPUs (4 slots of 2), dealt round-robin over 16 racks.
ClusterSpec synthetic_1024() {
  ClusterSpec spec{"synthetic-1024", {}};
  for (int m = 0; m < 128; ++m)
    spec.machines.push_back({"m" + std::to_string(m), "rack" + std::to_string(m % 16), {2, 2, 2, 2}});
  return spec;
}

const Cluster& cluster_named(const std::string& name) {
  static const Cluster testbed(*cluster_preset("paper-testbed-64"));
  static const Cluster paper256(*cluster_preset("paper-256"));
  static const Cluster big(synthetic_1024());
  if (name == "paper-testbed-64") return testbed;
  if (name == "paper-256") return paper256;
  return big;
}

struct Case {
  Offer offer;
  std::vector<GpuIndex> held;
};

// Random offers of `size` GPUs; the app holds up to 4 GPUs outside the offer and wants all of it.
std::vector<Case> cases(const Cluster& cluster, int size, int count) {
  Rng rng(static_cast<std::uint64_t>(size) * 7919 + static_cast<std::uint64_t>(cluster.size()));
  std::vector<Case> out;
  for (int i = 0; i < count; ++i) {
    std::vector<GpuIndex> all(static_cast<std::size_t>(cluster.size()));
    for (std::size_t g = 0; g < all.size(); ++g) all[g] = static_cast<GpuIndex>(g);
    for (std::size_t g = all.size() - 1; g > 0; --g) std::swap(all[g], all[rng.below(g + 1)]);
    Case c;
    c.offer.gpus.assign(all.begin(), all.begin() + size);
    std::sort(c.offer.gpus.begin(), c.offer.gpus.end());
    const int held = std::min<int>(static_cast<int>(rng.below(5)), cluster.size() - size);
    c.held.assign(all.begin() + size, all.begin() + size + held);
    out.push_back(std::move(c));
  }
  return out;
}

void BM_BidGeneration(benchmark::State& state, const std::string& cluster_name) {
  const Cluster& cluster = cluster_named(cluster_name);
  const int size = static_cast<int>(state.range(0));
  const std::vector<Case> offers = cases(cluster, size, 64);
  const SingleJobApp app{.elapsed = 3600, .iter_total = 10000, .iter_left = 6000, .serial_iter_time = 0.8,
                         .demand_max = size, .cluster_gpus = cluster.size(), .n_avg = 6};
  const SlowdownModel slowdown;
  const Valuation valuation = [&](int gpus, Locality where) {
    return finish_time_fairness(app, gpus, slowdown.slowdown(where));
  };
  std::vector<double> micros, cpu_micros;
  std::size_t next = 0, rows = 0;
  for (auto _ : state) {
    const Case& c = offers[next++ % offers.size()];
    const double cpu_start = thread_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    Bid bid = generate_bid(cluster, c.offer, {.app = 1, .held = c.held, .remaining_demand = size, .rho_no_new = 3},
                           valuation);
    const auto stop = std::chrono::steady_clock::now();
    cpu_micros.push_back((thread_cpu_seconds() - cpu_start) * 1e6);
    benchmark::DoNotOptimize(bid);
    rows += bid.rows.size();
    const double seconds = std::chrono::duration<double>(stop - start).count();
    state.SetIterationTime(seconds);
    micros.push_back(seconds * 1e6);
  }
  const double calls = static_cast<double>(micros.size());
  state.counters["p50_us"] = percentile(micros, 0.50);
  state.counters["p95_us"] = percentile(micros, 0.95);
  state.counters["cpu_p50_us"] = percentile(cpu_micros, 0.50);
  state.counters["cpu_p95_us"] = percentile(cpu_micros, 0.95);
  state.counters["rows"] = static_cast<double>(rows) / calls;
}

BENCHMARK_CAPTURE(BM_BidGeneration, paper_testbed_64, std::string("paper-testbed-64"))
    ->Arg(16)->Arg(64)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_BidGeneration, paper_256, std::string("paper-256"))
    ->Arg(16)->Arg(64)->Arg(256)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_BidGeneration, synthetic_1024, std::string("synthetic-1024"))
    ->Arg(16)->Arg(64)->Arg(256)->Arg(1024)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace themis::bidder

BENCHMARK_MAIN();
