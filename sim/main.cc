// themis-sim: replay a workload on a cluster under one policy (run) or several (compare).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include "coordinator/arbiter/policies/registry.h"
#include "core/cluster_file.h"
#include "core/cluster_presets.h"
#include "sim/metrics.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/svg_plot.h"
#include "sim/workload.h"

namespace {

using namespace themis;
using namespace themis::sim;

struct Common {
  std::string workload;
  std::string cluster = "paper-256";
  std::string philly;
  std::uint64_t seed = 1;
  int apps = 50;
  double load = 2.0;
  Seconds lease = 600;
  double filter_f = 0.8;
  bool json = false;
};

void add_common(CLI::App* cmd, Common& c) {
  cmd->add_option("--workload", c.workload, "trace file (JSON lines), or w1 / w2")->required();
  cmd->add_option("--cluster", c.cluster, "cluster TOML file or preset (paper-testbed-64, paper-footnote-168, paper-256)");
  cmd->add_option("--seed", c.seed, "seed of the generated workload and of the policy's random draws");
  cmd->add_option("--apps", c.apps, "apps in a generated workload")->check(CLI::PositiveNumber);
  cmd->add_option("--load", c.load, "offered load of a generated workload")->check(CLI::PositiveNumber);
  cmd->add_option("--philly", c.philly, "Philly job table for w1/w2 (default: shared traces)");
  cmd->add_option("--lease", c.lease, "lease length in seconds")->check(CLI::PositiveNumber);
  cmd->add_option("--filter-f", c.filter_f, "Themis filter fraction f")->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--json", c.json, "machine-readable output");
}

Cluster load_cluster(const std::string& name) {
  if (auto preset = cluster_preset(name)) return Cluster(*preset);
  if (std::filesystem::exists(name)) return Cluster(load_cluster_file(name));
  std::string known;
  for (const auto& n : cluster_preset_names()) known += " " + n;
  throw std::invalid_argument("--cluster: '" + name + "' is neither a file nor a preset (presets:" + known + ")");
}

std::vector<AppSpec> load_workload(const Common& c, int cluster_gpus) {
  if (c.workload == "w1" || c.workload == "w2") {
    const auto philly = load_philly_csv(c.philly.empty() ? default_philly_csv() : std::filesystem::path(c.philly));
    WorkloadOptions o;
    o.apps = c.apps;
    o.seed = c.seed;
    o.load = c.load;
    o.cluster_gpus = cluster_gpus;
    return c.workload == "w1" ? workload1(philly, o) : workload2(philly, o);
  }
  return load_trace(c.workload);
}

// A progress line on stderr, only on a terminal and only once a run has taken a couple of seconds.
ProgressFn progress_bar(const std::string& label) {
  if (!isatty(STDERR_FILENO)) return {};
  const auto start = std::chrono::steady_clock::now();
  return [label, start, last = start](Seconds now, std::size_t done, std::size_t total) mutable {
    const auto t = std::chrono::steady_clock::now();
    if (t - start < std::chrono::seconds(2) || t - last < std::chrono::milliseconds(200)) return;
    last = t;
    std::fprintf(stderr, "\r%-10s %zu/%zu apps finished, virtual time %.1f h   ", label.c_str(), done, total, now / 3600);
    if (done == total) std::fprintf(stderr, "\n");
  };
}

SimResult run_one(const Cluster& cluster, const std::vector<AppSpec>& apps, const std::string& policy_name,
                  const Common& c) {
  arbiter::policies::PolicySettings ps;
  ps.filter_f = c.filter_f;
  ps.lease = c.lease;
  auto policy = arbiter::policies::make_policy(policy_name, ps);
  SimSettings s;
  s.lease = c.lease;
  s.seed = c.seed;
  auto result = simulate(cluster, apps, *policy, s, progress_bar(policy_name));
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"themis-sim: trace-driven simulator of GPU-cluster scheduling policies"};
  app.require_subcommand(1);
  Common run_opts;
  std::string policy = "themis";
  auto* run = app.add_subcommand("run", "simulate one policy");
  add_common(run, run_opts);
  run->add_option("--policy", policy, "policy name");

  Common cmp_opts;
  std::string policies;
  auto* compare = app.add_subcommand("compare", "simulate several policies on the same workload");
  add_common(compare, cmp_opts);
  compare->add_option("--policies", policies, "comma-separated policy names (default: all)");
  std::string plot_dir;
  compare->add_option("--plot", plot_dir, "write rho_cdf.svg and gpu_time.svg into this folder");

  Common sweep_opts;
  std::string sweep_param = "f";
  std::string sweep_values;
  std::string sweep_policy = "themis";
  auto* sweep = app.add_subcommand("sweep", "one policy over values of f or the lease (Themis Fig 19)");
  add_common(sweep, sweep_opts);
  sweep->add_option("--param", sweep_param, "f or lease")->check(CLI::IsMember({"f", "lease"}));
  sweep->add_option("--values", sweep_values, "comma-separated values")->required();
  sweep->add_option("--policy", sweep_policy, "policy name");

  Common gen_opts;
  auto* generate = app.add_subcommand("generate", "write a generated workload (w1 / w2) as a trace");
  add_common(generate, gen_opts);

  CLI11_PARSE(app, argc, argv);
  try {
    if (run->parsed()) {
      const Cluster cluster = load_cluster(run_opts.cluster);
      const auto apps = load_workload(run_opts, cluster.size());
      const auto result = run_one(cluster, apps, policy, run_opts);
      const auto summary = summarize(result);
      std::cout << (run_opts.json ? run_json(result, summary) : run_table(result, summary));
    } else if (compare->parsed()) {
      const Cluster cluster = load_cluster(cmp_opts.cluster);
      const auto apps = load_workload(cmp_opts, cluster.size());
      std::vector<std::string> names;
      if (policies.empty()) {
        names = arbiter::policies::policy_names();
      } else {
        std::size_t pos = 0;
        while (pos <= policies.size()) {
          const auto comma = std::min(policies.find(',', pos), policies.size());
          names.push_back(policies.substr(pos, comma - pos));
          pos = comma + 1;
        }
      }
      std::vector<RunSummary> summaries;
      for (const auto& name : names) summaries.push_back(summarize(run_one(cluster, apps, name, cmp_opts)));
      std::cout << (cmp_opts.json ? compare_json(summaries) : compare_table(summaries));
      if (!plot_dir.empty()) {
        std::filesystem::create_directories(plot_dir);
        for (const auto& [file, svg] : {std::pair{"rho_cdf.svg", rho_cdf_svg(summaries)},
                                        std::pair{"gpu_time.svg", gpu_time_svg(summaries)}}) {
          const auto path = std::filesystem::path(plot_dir) / file;
          std::ofstream out(path);
          out << svg;
          if (!out) throw std::runtime_error("--plot: cannot write " + path.string());
        }
      }
    } else if (sweep->parsed()) {
      const Cluster cluster = load_cluster(sweep_opts.cluster);
      const auto apps = load_workload(sweep_opts, cluster.size());
      std::vector<RunSummary> summaries;
      std::size_t pos = 0;
      while (pos <= sweep_values.size()) {
        const auto comma = std::min(sweep_values.find(',', pos), sweep_values.size());
        const std::string text = sweep_values.substr(pos, comma - pos);
        pos = comma + 1;
        Common c = sweep_opts;
        double value = 0;
        try {
          value = std::stod(text);
        } catch (const std::exception&) {
          throw std::invalid_argument("--values: '" + text + "' is not a number");
        }
        if (sweep_param == "f") {
          if (value < 0 || value > 1) throw std::invalid_argument("--values: f must be in [0, 1], got " + text);
          c.filter_f = value;
        } else {
          if (value <= 0) throw std::invalid_argument("--values: lease must be > 0, got " + text);
          c.lease = value;
        }
        RunSummary s = summarize(run_one(cluster, apps, sweep_policy, c));
        s.policy = sweep_policy + " " + sweep_param + "=" + text;
        summaries.push_back(std::move(s));
      }
      std::cout << (sweep_opts.json ? compare_json(summaries) : compare_table(summaries));
    } else if (generate->parsed()) {
      const Cluster cluster = load_cluster(gen_opts.cluster);
      std::cout << trace_to_jsonl(load_workload(gen_opts, cluster.size()));
    }
  } catch (const std::exception& e) {
    std::cerr << "themis-sim: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
