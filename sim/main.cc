// themis-sim: replay a workload on a cluster under one policy (run) or several (compare).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "policy/arbiter/policies/registry.h"
#include "policy/planner/record_json.h"
#include "core/cluster_file.h"
#include "core/cluster_presets.h"
#include "sim/experiments.h"
#include "sim/gavel_fidelity.h"
#include "sim/gavel_fidelity_report.h"
#include "sim/gavel_trace.h"
#include "sim/itp_trace.h"
#include "sim/metrics.h"
#include "sim/report.h"
#include "sim/progress_line.h"
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
  int apps = 100;
  double load = 3.0;
  Seconds lease = 600;
  double filter_f = 0.8;
  std::string rounding = "time-share";
  std::string filter = "offer-bounded";
  std::string idle_rho = "whole-demand";
  long long small_search_nodes = -1;  // -1: the solver's default (default_small_search_nodes)
  long long solver_max_nodes = 200000;
  int solver_threads = 0;
  std::string solver = "shape";
  std::string shapes = "on";
  std::string contention_ahead = "on";
  std::string gang_reservation = "on";
  std::string gang_backfill = "off";
  double network_fraction = -1;
  std::string w2_arrivals = "own";
  double estimate_error = 0;
  Seconds batch_window = -1;
  Seconds restart_cost = 0;
  int shrink = 1;
  AppId liar = -1;
  std::string liar_choice = "0";  // sweep --liar: an app's name or index, or "random"
  double lie = 0;
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
  cmd->add_option("--rounding", c.rounding, "Themis: whole GPUs from the payment factor c: nearest, lottery or time-share")
      ->check(CLI::IsMember({"nearest", "lottery", "time-share"}));
  cmd->add_option("--filter", c.filter,
                  "Themis: offer-bounded (of the worst (1-f)N apps, as many as can use the offer), fixed (all of them) or "
                  "adaptive (f chosen each round: the upper half of the rho range, then as many as can use the offer)")
      ->check(CLI::IsMember({"offer-bounded", "fixed", "adaptive"}));
  cmd->add_option("--idle-rho", c.idle_rho,
                  "current rho of an app holding no GPUs, after one more lease on: whole-demand (all it can use), "
                  "fair-share or one-gpu")
      ->check(CLI::IsMember({"whole-demand", "fair-share", "one-gpu"}));
  cmd->add_option("--small-search-nodes", c.small_search_nodes,
                  "Themis: each winner-determination solve first tries depth-first search up to this many nodes, "
                  "then the solver (0: the solver alone; default 2000 before shape, 20000 before cbc and bnb)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--solver-threads", c.solver_threads,
                  "Themis: the solves without each winner on up to this many threads (0: the machine's cores, at "
                  "most 8); the results are the same for every count")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--solver-max-nodes", c.solver_max_nodes,
                  "Themis: the solver's nodes per winner-determination solve; past them it keeps its best packing and "
                  "reports the gap (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--solver", c.solver,
                  "Themis: the winner-determination solver after the depth-first search: shape (the default, its own "
                  "branch and bound over shapes), cbc or bnb")
      ->check(CLI::IsMember({"cbc", "shape", "bnb"}));
  cmd->add_option("--contention-ahead", c.contention_ahead,
                  "Themis: on (an app's ranking key counts N_avg over its whole life, the rest of it from the apps present "
                  "now, each until its expected finish) or off (the average so far stands for the future)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--shapes", c.shapes,
                  "Themis: on (bid rows as shapes: interchangeable GPUs are one row, concrete GPUs chosen after the "
                  "auction) or off (every row's GPUs literally)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--gang-reservation", c.gang_reservation,
                  "Themis: on (the offer waits for the worst app's gang when it is wider than the offer) or off")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--gang-backfill", c.gang_backfill,
                  "Themis: on (a reserved offer is lent to other apps until the gang fits) or off (it idles)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--w2-arrivals", c.w2_arrivals,
                  "w2: own (compressed to its own work, default) or w1 (Workload 1's arrival times, as the paper)")
      ->check(CLI::IsMember({"own", "w1"}));
  cmd->add_option("--net-frac", c.network_fraction,
                  "fraction of network-intensive apps in a generated workload (default: Table 4's mix)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--error", c.estimate_error, "apps' estimate error X: iterations and slowdown off by U[-X, X]")
      ->check(CLI::Range(0.0, 0.99));
  cmd->add_option("--batch-window", c.batch_window, "seconds within which expiring leases are batched (default lease/10)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--restart-cost", c.restart_cost,
                  "seconds a job makes no progress after its GPU set changes (checkpoint, container start)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--contention", c.shrink, "shrink the cluster to 1/K of its machines (workload kept)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", c.json, "machine-readable output");
}

ClusterSpec load_cluster_spec(const std::string& name) {
  if (auto preset = cluster_preset(name)) return *preset;
  if (name == "truth-telling-64") return truth_telling_cluster();
  if (std::filesystem::exists(name)) return load_cluster_file(name);
  std::string known;
  for (const auto& n : cluster_preset_names()) known += " " + n;
  throw std::invalid_argument("--cluster: '" + name + "' is neither a file nor a preset (presets:" + known +
                              " truth-telling-64)");
}

// The workload is generated for the full cluster; --contention K then runs it on 1/K of the machines.
struct Setup {
  Cluster full;
  Cluster cluster;
};

Setup load_setup(const Common& c) {
  const ClusterSpec spec = load_cluster_spec(c.cluster);
  return {Cluster(spec), Cluster(shrink_cluster(spec, c.shrink))};
}

std::vector<AppSpec> load_workload(const Common& c, int cluster_gpus) {
  if (c.workload == "truth-telling") return truth_telling_workload();
  if (c.workload == "w1" || c.workload == "w2") {
    const auto philly = load_philly_csv(c.philly.empty() ? default_philly_csv() : std::filesystem::path(c.philly));
    WorkloadOptions o;
    o.apps = c.apps;
    o.seed = c.seed;
    o.load = c.load;
    o.cluster_gpus = cluster_gpus;
    o.network_fraction = c.network_fraction;
    o.w2_arrivals_from_w1 = c.w2_arrivals == "w1";
    return c.workload == "w1" ? workload1(philly, o) : workload2(philly, o);
  }
  return load_trace(c.workload);
}

// A progress line on stderr (sim/progress_line.h), only on a terminal and only once a run has taken a
// couple of seconds; cleared when the run ends.
ProgressFn progress_bar(const std::string& label) {
  if (!isatty(STDERR_FILENO)) return {};
  const auto start = std::chrono::steady_clock::now();
  return [label, start, last = start, shown = false](Seconds now, std::size_t done, std::size_t total) mutable {
    if (done == total) {
      if (shown) std::fputs(kClearLine, stderr);
      shown = false;
      return;
    }
    const auto t = std::chrono::steady_clock::now();
    if (t - start < std::chrono::seconds(2) || t - last < std::chrono::milliseconds(200)) return;
    last = t;
    shown = true;
    std::fprintf(stderr, "%s%s", kClearLine, progress_text(label, now, done, total).c_str());
  };
}

// `label` names the run on the progress line (the policy; for a sweep also its point).
SimResult run_one(const Cluster& cluster, const std::vector<AppSpec>& apps, const std::string& policy_name,
                  const Common& c, const std::string& label = "", const RoundObserver& observe_round = {}) {
  arbiter::policies::PolicySettings ps;
  ps.filter_f = c.filter_f;
  ps.rounding = c.rounding;
  ps.filter = c.filter;
  ps.gang_reservation = c.gang_reservation == "on";
  ps.gang_backfill = c.gang_backfill == "on";
  if (c.small_search_nodes >= 0) ps.small_search_nodes = c.small_search_nodes;
  ps.solver_max_nodes = c.solver_max_nodes;
  ps.solver_threads = c.solver_threads;
  ps.shape_bids = c.shapes == "on";
  ps.solver = c.solver;
  ps.lease = c.lease;
  auto policy = arbiter::policies::make_policy(policy_name, ps);
  SimSettings s;
  s.lease = c.lease;
  s.seed = c.seed;
  s.batch_window = c.batch_window;
  s.estimate_error = c.estimate_error;
  s.restart_cost = c.restart_cost;
  s.idle_rho = *parse_idle_rho(c.idle_rho);
  s.contention_ahead = c.contention_ahead == "on";
  s.liar = c.liar;
  s.lie = c.lie;
  auto result = simulate(cluster, apps, *policy, s, progress_bar(label.empty() ? policy_name : label), observe_round);
  return result;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto comma = std::min(text.find(',', pos), text.size());
    out.push_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

// Applies one sweep value to the options; returns it as the plot's x.
double parse_sweep_value(const std::string& param, const std::string& text, Common& c) {
  double value = 0;
  try {
    value = std::stod(text);
  } catch (const std::exception&) {
    throw std::invalid_argument("--values: '" + text + "' is not a number");
  }
  auto need = [&](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument("--values: " + param + " must be " + what + ", got " + text);
  };
  if (param == "f") {
    need(value >= 0 && value <= 1, "in [0, 1]");
    c.filter_f = value;
  } else if (param == "lease") {
    need(value > 0, "> 0");
    c.lease = value;
  } else if (param == "contention") {
    need(value >= 1 && value == std::floor(value), "an integer >= 1");
    c.shrink = static_cast<int>(value);
  } else if (param == "net-frac") {
    need(value >= 0 && value <= 1, "in [0, 1]");
    c.network_fraction = value;
  } else if (param == "error") {
    need(value >= 0 && value < 1, "in [0, 1)");
    c.estimate_error = value;
  } else if (param == "restart-cost") {
    need(value >= 0, ">= 0");
    c.restart_cost = value;
  } else {
    need(value >= 0, ">= 0");
    c.lie = value;
  }
  return value;
}

void write_plots(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  std::filesystem::create_directories(dir);
  for (const auto& [file, svg] : files) {
    const auto path = std::filesystem::path(dir) / file;
    std::ofstream out(path);
    out << svg;
    if (!out) throw std::runtime_error("--plot: cannot write " + path.string());
  }
}

struct ConvertOptions {
  std::string from;
  std::string to = "themis";
  std::string input;
  std::string throughputs;
  std::string gpu = "v100";
  std::string name_prefix;
  std::uint64_t seed = 1;
  double network_fraction = -1;
  Seconds from_time = 0;
  Seconds until_time = -1;
  long long max_jobs = 0;
};

// Reads --input in --from's format and writes it to stdout in --to's; what was dropped goes to stderr.
void convert(const ConvertOptions& o) {
  std::optional<GavelThroughputs> table;
  auto throughputs = [&]() -> const GavelThroughputs& {
    if (!table)
      table = GavelThroughputs::load(o.throughputs.empty() ? default_gavel_throughputs_csv()
                                                           : std::filesystem::path(o.throughputs));
    return *table;
  };
  std::vector<AppSpec> apps;
  if (o.from == "gavel") {
    if (o.from_time != 0 || o.until_time >= 0)
      throw std::invalid_argument("--from-time/--until-time: only for --from itp (use --max-jobs)");
    GavelImportOptions g;
    g.gpu = parse_gavel_gpu(o.gpu);
    g.name_prefix = o.name_prefix.empty() ? std::filesystem::path(o.input).stem().string() + "-" : o.name_prefix;
    g.max_jobs = o.max_jobs;
    const auto jobs = load_gavel_trace(o.input);
    GavelImport imported = gavel_to_apps(jobs, throughputs(), g, o.input);
    const auto beyond = static_cast<long long>(jobs.size()) - imported.dropped - static_cast<long long>(imported.apps.size());
    std::cerr << std::setprecision(15) << "themis-sim convert: " << o.input << ": " << jobs.size() << " jobs, " << imported.apps.size()
              << " kept, " << imported.dropped << " dropped (no Gavel throughput at their scale factor on "
              << o.gpu << ")" << (beyond > 0 ? ", " + std::to_string(beyond) + " beyond --max-jobs" : "")
              << ", arrivals rebased by " << imported.rebased_by << " s\n";
    for (const auto& kind : imported.dropped_kinds) std::cerr << "  dropped " << kind << "\n";
    apps = std::move(imported.apps);
  } else if (o.from == "itp") {
    ItpImportOptions i;
    i.seed = o.seed;
    i.network_fraction = o.network_fraction;
    i.from_time = o.from_time;
    i.until_time = o.until_time;
    i.max_jobs = o.max_jobs;
    const auto jobs = load_itp_csv(o.input);
    ItpImport imported = itp_to_apps(jobs, i);
    std::cerr << std::setprecision(15) << "themis-sim convert: " << o.input << ": " << jobs.size() << " jobs, " << imported.apps.size()
              << " kept (--from-time, --until-time, --max-jobs), arrivals rebased by " << imported.rebased_by << " s\n";
    apps = std::move(imported.apps);
  } else {
    if (o.max_jobs != 0 || o.from_time != 0 || o.until_time >= 0)
      throw std::invalid_argument("--max-jobs/--from-time/--until-time: only for --from gavel or itp");
    apps = load_trace(o.input);
  }
  if (apps.empty()) throw std::invalid_argument("--input: no job left to convert");
  std::cout << (o.to == "gavel" ? apps_to_gavel(apps, throughputs()) : trace_to_jsonl(apps));
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
  std::string fidelity = "themis";
  Seconds resolve_interval = 1920;
  run->add_option("--fidelity", fidelity,
                  "themis (default: the event-driven engine) or gavel (Gavel's simulator: rounds of --lease s, "
                  "allocation re-solved at most every --resolve-interval s; policy fifo only)")
      ->check(CLI::IsMember({"themis", "gavel"}));
  run->add_option("--resolve-interval", resolve_interval, "--fidelity gavel: least seconds between re-solves")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--liar", run_opts.liar_choice,
                  "with --lie: the lying app, by name or index, or 'random' (drawn with --seed among apps with a multi-GPU job)");
  run->add_option("--lie", run_opts.lie,
                  "the liar over-reports the slowdown of placements spread over machines by this fraction (Fig 18; default 0)")
      ->check(CLI::NonNegativeNumber);
  std::string round_log;
  run->add_option("--round-log", round_log,
                  "write one JSON line per round to this file: the apps' current rho, GPUs held and demand; bidders, "
                  "bids, winners, grants and idle GPUs");
  std::string auction_log;
  int auction_log_bidders = 1;
  run->add_option("--auction-log", auction_log,
                  "write the cluster, then one JSON line per auction (the GPUs offered and every bid, GPU sets and "
                  "scopes included) to this file, for auction_bench --recorded");
  run->add_option("--auction-log-bidders", auction_log_bidders, "--auction-log: only auctions with at least this many bidders (default 1)")
      ->check(CLI::PositiveNumber);

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
  std::string sweep_policies = "themis";
  std::string sweep_plot;
  auto* sweep = app.add_subcommand(
      "sweep", "policies over values of f, lease (Fig 19), contention (Fig 14), net-frac (Figs 15-16), error (Fig 17), "
               "lie (Fig 18)");
  add_common(sweep, sweep_opts);
  sweep->add_option("--param", sweep_param, "f, lease, contention, net-frac, error, restart-cost or lie")
      ->check(CLI::IsMember({"f", "lease", "contention", "net-frac", "error", "restart-cost", "lie"}));
  sweep->add_option("--values", sweep_values, "comma-separated values")->required();
  sweep->add_option("--policies,--policy", sweep_policies, "comma-separated policy names (default: themis)");
  sweep->add_option("--liar", sweep_opts.liar_choice,
                    "lie: the lying app, by name or index, or 'random' (drawn with --seed among apps with a multi-GPU job); "
                    "default 0");
  sweep->add_option("--plot", sweep_plot, "write sweep_max_rho.svg and sweep_gpu_time.svg (or, for lie, sweep_jct.svg)");

  Common gen_opts;
  auto* generate = app.add_subcommand("generate", "write a generated workload (w1 / w2) as a trace");
  add_common(generate, gen_opts);

  ConvertOptions conv;
  auto* convert_cmd = app.add_subcommand(
      "convert", "convert a trace: Gavel (10- or 7-field) or ITP CSV to ours, ours or Gavel's to Gavel's 10-field format");
  convert_cmd->add_option("--from", conv.from, "input format: gavel, itp or themis")
      ->required()
      ->check(CLI::IsMember({"gavel", "itp", "themis"}));
  convert_cmd->add_option("--to", conv.to, "output format: themis (default) or gavel")
      ->check(CLI::IsMember({"themis", "gavel"}));
  convert_cmd->add_option("--input", conv.input, "the trace file")->required();
  convert_cmd->add_option("--throughputs", conv.throughputs, "Gavel throughput table (default: shared traces' derived CSV)");
  convert_cmd->add_option("--gpu", conv.gpu, "Gavel GPU whose throughputs set iteration times and slowdowns (v100)")
      ->check(CLI::IsMember({"v100", "p100", "k80"}));
  convert_cmd->add_option("--name-prefix", conv.name_prefix, "Gavel import: app names are prefix + line (default: file stem + '-')");
  convert_cmd->add_option("--seed", conv.seed, "ITP import: seed of the model draw");
  convert_cmd->add_option("--net-frac", conv.network_fraction, "ITP import: fraction of network-intensive models (default: Table 4's mix)")
      ->check(CLI::Range(0.0, 1.0));
  convert_cmd->add_option("--from-time", conv.from_time, "ITP import: keep jobs submitted at or after this second")
      ->check(CLI::NonNegativeNumber);
  convert_cmd->add_option("--until-time", conv.until_time, "ITP import: keep jobs submitted before this second")
      ->check(CLI::NonNegativeNumber);
  convert_cmd->add_option("--max-jobs", conv.max_jobs, "keep the first N jobs by arrival (0: all)")->check(CLI::NonNegativeNumber);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // usage errors exit 2 (docs/ux.md), not CLI11's own codes
  }
  try {
    if (run->parsed() && fidelity == "gavel") {
      if (policy != "fifo")
        throw std::invalid_argument("--fidelity gavel: only --policy fifo is reproduced (got '" + policy + "')");
      if (!round_log.empty()) throw std::invalid_argument("--round-log: only with the event engine (--fidelity themis)");
      if (!auction_log.empty()) throw std::invalid_argument("--auction-log: only with the event engine (--fidelity themis)");
      const Setup setup = load_setup(run_opts);
      GavelFidelitySettings gs;
      gs.gpus = setup.cluster.size();
      gs.round = run_opts.lease;
      gs.resolve_interval = resolve_interval;
      const auto result = simulate_gavel_fifo(load_workload(run_opts, setup.full.size()), gs);
      std::cout << (run_opts.json ? gavel_fidelity_json(result, gs) : gavel_fidelity_table(result, gs));
    } else if (run->parsed()) {
      const Setup setup = load_setup(run_opts);
      const auto apps = load_workload(run_opts, setup.full.size());
      if (run_opts.lie > 0) run_opts.liar = choose_liar(apps, run_opts.liar_choice, run_opts.seed);
      std::ofstream log, auctions;
      if (!round_log.empty()) {
        log.open(round_log);
        if (!log) throw std::invalid_argument("--round-log: cannot write " + round_log);
      }
      if (!auction_log.empty()) {
        auctions.open(auction_log);
        if (!auctions) throw std::invalid_argument("--auction-log: cannot write " + auction_log);
        auctions << nlohmann::json{{"cluster", planner::cluster_to_json(setup.cluster)}}.dump() << '\n';
      }
      RoundObserver observe;
      if (log.is_open() || auctions.is_open()) {
        observe = [&](const planner::RoundPlan& plan, std::span<const RoundLogApp> seen) {
          if (log.is_open()) log << round_log_line(plan, seen) << '\n';
          const arbiter::AuctionRecord& a = plan.outcome.auction;
          if (auctions.is_open() && static_cast<int>(a.bidders.size()) >= auction_log_bidders)
            auctions << planner::auction_to_json(Offer{plan.round, a.offered}, a.bids, plan.now).dump() << '\n';
        };
      }
      const auto result = run_one(setup.cluster, apps, policy, run_opts, "", observe);
      if (log.is_open() && !log.flush()) throw std::runtime_error("--round-log: writing " + round_log + " failed");
      if (auctions.is_open() && !auctions.flush()) throw std::runtime_error("--auction-log: writing " + auction_log + " failed");
      const auto summary = summarize(result, setup.cluster.size());
      std::cout << (run_opts.json ? run_json(result, summary) : run_table(result, summary));
    } else if (compare->parsed()) {
      const Setup setup = load_setup(cmp_opts);
      const auto apps = load_workload(cmp_opts, setup.full.size());
      const auto names = policies.empty() ? arbiter::policies::policy_names() : split_list(policies);
      std::vector<RunSummary> summaries;
      for (const auto& name : names)
        summaries.push_back(summarize(run_one(setup.cluster, apps, name, cmp_opts), setup.cluster.size()));
      std::cout << (cmp_opts.json ? compare_json(summaries) : compare_table(summaries));
      if (!plot_dir.empty())
        write_plots(plot_dir, {{"rho_cdf.svg", rho_cdf_svg(summaries)},
                               {"gpu_time.svg", gpu_time_svg(summaries)},
                               {"max_rho.svg", max_rho_svg(summaries)}});
    } else if (sweep->parsed()) {
      const auto names = split_list(sweep_policies);
      std::vector<RunSummary> summaries;
      std::vector<double> xs;
      std::vector<Series> max_rho(names.size()), gpu_time(names.size()), liar_jct(1), others_jct(1);
      std::vector<std::map<AppId, Seconds>> first_jct(names.size());  // per policy, at the sweep's first value
      for (const std::string& text : split_list(sweep_values)) {
        Common c = sweep_opts;
        const double value = parse_sweep_value(sweep_param, text, c);
        xs.push_back(value);
        const Setup setup = load_setup(c);
        const auto apps = load_workload(c, setup.full.size());
        if (sweep_param == "lie") c.liar = choose_liar(apps, c.liar_choice, c.seed);
        for (std::size_t p = 0; p < names.size(); ++p) {
          const SimResult result = run_one(setup.cluster, apps, names[p], c, names[p] + " " + sweep_param + "=" + text);
          RunSummary s = summarize(result, setup.cluster.size());
          s.policy = names[p] + " " + sweep_param + "=" + text;
          max_rho[p] = {names[p], max_rho[p].values};
          max_rho[p].values.push_back(s.max_rho);
          gpu_time[p] = {names[p], gpu_time[p].values};
          gpu_time[p].values.push_back(s.gpu_time / 3600);
          if (c.liar >= 0) {
            double others = 0;
            for (const AppResult& a : result.apps)
              if (a.id == c.liar) s.liar_jct = a.jct;
              else others += a.jct;
            s.others_avg_jct = others / static_cast<double>(std::max<std::size_t>(1, result.apps.size() - 1));
            if (first_jct[p].empty()) {
              for (const AppResult& a : result.apps) first_jct[p][a.id] = a.jct;
            } else {
              const LieEffect e = lie_effect(result.apps, c.liar, first_jct[p]);
              s.others_gained_more = e.others_gained_more;
              s.others_median_abs_change = e.others_median_abs_change;
            }
            liar_jct[0] = {"liar", liar_jct[0].values};
            liar_jct[0].values.push_back(s.liar_jct / 3600);
            others_jct[0] = {"truthful (mean)", others_jct[0].values};
            others_jct[0].values.push_back(s.others_avg_jct / 3600);
          }
          summaries.push_back(std::move(s));
        }
      }
      std::cout << (sweep_opts.json ? compare_json(summaries) : compare_table(summaries));
      if (!sweep_plot.empty()) {
        const std::string x = sweep_param == "contention" ? "contention (cluster shrunk to 1/K)" : sweep_param;
        if (sweep_param == "lie") {
          std::vector<Series> jct = {liar_jct[0], others_jct[0]};
          write_plots(sweep_plot, {{"sweep_jct.svg", line_svg("JCT of the lying app and of the truthful apps",
                                                                "X (lie, fraction)", "JCT (hours)", xs, jct)}});
        } else {
          write_plots(sweep_plot,
                      {{"sweep_max_rho.svg", line_svg("Max rho over " + sweep_param, x, "max rho", xs, max_rho)},
                       {"sweep_gpu_time.svg",
                        line_svg("GPU time over " + sweep_param, x, "GPU time (GPU-hours)", xs, gpu_time)}});
        }
      }
    } else if (convert_cmd->parsed()) {
      convert(conv);
    } else if (generate->parsed()) {
      const Setup setup = load_setup(gen_opts);
      std::cout << trace_to_jsonl(load_workload(gen_opts, setup.full.size()));
    }
  } catch (const std::exception& e) {
    std::cerr << "themis-sim: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
