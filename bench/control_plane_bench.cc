// Control-plane round latency (docs/performance.md "Control plane"): a real themis-coordinator and N
// real themis-nodelet processes with virtual GPUs on loopback, and A apps whose launchers are app
// agents held by this process (bench/launcher_agents.h: they attach, bid with the bidder library, report
// ρ and demand, and launch their jobs, `sleep`, started by the nodelets, on the GPUs they are granted).
//
// The resource event is lease expiry: every lease lasts --lease, so every expiry re-auctions the GPUs.
// For each round triggered by lease expiry it reports, from the coordinator's rounds table (times taken
// in the coordinator's loop) and from the agents' receive times:
//   event → auction start   batch window, offers out, bids back
//   auction                 the policy's round (filter, bids validation, partial-allocation auction, leftover)
//   auction end → commit    leases, job states, bids and events written in one transaction
//   commit → grants sent    grants handed to ZeroMQ
//   event → last grant      delivered: the last agent received its grant for that round
// and p50/p95 over the rounds.
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bench/bench_support.h"
#include "bench/launcher_agents.h"
#include "coordinator/store/database.h"
#include "core/rng.h"
#include "tests/integration/process.h"

namespace {

using namespace themis;
using bench::free_port;
using bench::unix_now;
using bench::print_distribution;
using bench::write_file;
using Clock = std::chrono::steady_clock;

struct Options {
  int nodelets = 64;
  int gpus_per_nodelet = 8;
  int machines_per_rack = 8;
  int apps = 200;
  int rounds = 30;               // lease-expiry rounds to measure
  std::string lease = "5s";
  std::string batch_window = "200ms";
  std::string heartbeat = "5s";
  std::string bin_dir;
  std::string state_dir;          // kept when given
  std::uint64_t seed = 1;
  int timeout_s = 900;
};

int run(const Options& o) {
  namespace fs = std::filesystem;
  std::string dir = o.state_dir;
  if (dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "themis-cp-bench-XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
  } else {
    fs::create_directories(dir);
  }
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_port());
  const std::string db_path = dir + "/themis.db";
  write_file(dir + "/themis.toml",
             "[cluster]\ncoordinator = \"" + endpoint + "\"\n\n[coordinator]\nlisten = \"" + endpoint +
                 "\"\ndatabase = \"" + db_path + "\"\ninsecure = true\nheartbeat_interval = \"" + o.heartbeat +
                 "\"\nheartbeat_lives = 3\nlease_duration = \"" + o.lease + "\"\nround_batch_window = \"" +
                 o.batch_window + "\"\npolicy = \"themis\"\nseed = " + std::to_string(o.seed) +
                 // The agents run no first-iteration probe (docs/reliability.md "Probe"): the apps compete at once.
                 "\nprobe_duration = \"0s\"\n");
  std::cout << "state in " << dir << ", coordinator on " << endpoint << "\n";
  testing::Process coordinator({o.bin_dir + "/themis-coordinator", "-c", dir + "/themis.toml", "--insecure"},
                               dir + "/coordinator.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::vector<testing::Process> nodelets;
  const std::string slots = bench::slots_toml(o.gpus_per_nodelet);
  for (int n = 0; n < o.nodelets; ++n) {
    char host[32];
    std::snprintf(host, sizeof host, "gpu%03d", n);
    write_file(dir + "/" + host + ".toml",
               "[cluster]\ncoordinator = \"" + endpoint + "\"\n\n[nodelet]\nhost = \"" + host + "\"\nrack = \"rack-" +
                   std::to_string(n / o.machines_per_rack) + "\"\naddress = \"127.0.0.1\"\ninsecure = true\nwork_dir = \"" +
                   dir + "/" + host + "\"\ngrace_period = \"1s\"\nslots = " + slots + "\n");
    nodelets.emplace_back(std::vector<std::string>{o.bin_dir + "/themis-nodelet", "-c", dir + "/" + host + ".toml", "--insecure"},
                          dir + "/" + host + ".log");
  }
  auto query = [&](const std::string& sql) {
    store::Database db(db_path, /*read_only=*/true);
    auto st = db.prepare(sql);
    return st.step() && !st.is_null(0) ? st.real(0) : 0.0;
  };
  const auto start = Clock::now();
  auto elapsed_s = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  bench::wait_for_nodelets(query, o.nodelets, coordinator, dir);
  std::cout << o.nodelets << " nodelets up (" << o.nodelets * o.gpus_per_nodelet << " GPUs) after " << elapsed_s() << " s\n";

  // Submit the apps (one client socket, the Submit message themisctl sends), then attach an agent to each.
  zmq::context_t context(1);
  Rng rng(o.seed);
  std::vector<bench::Agent> agents(static_cast<std::size_t>(o.apps));
  for (auto& a : agents) bench::draw_app(a, rng);
  bench::submit_apps(context, endpoint, agents);
  bench::attach_agents(context, endpoint, agents);
  std::cout << o.apps << " apps submitted and attaching after " << elapsed_s() << " s\n";

  const bench::AgentSettings agent_settings;
  bench::AgentStats stats;
  const double first_round_after = unix_now();
  auto measured_rounds = [&] {
    return static_cast<int>(query("SELECT count(*) FROM rounds WHERE trigger LIKE '%lease expiry%' AND grants_sent_at IS NOT NULL "
                                  "AND started_at > " + std::to_string(first_round_after)));
  };
  int measured = 0;
  auto last_check = Clock::now();
  while (measured < o.rounds) {
    bench::serve_agents(agents, std::chrono::milliseconds(10), agent_settings, stats);
    if (Clock::now() - last_check > std::chrono::seconds(2)) {
      last_check = Clock::now();
      if (!coordinator.running()) throw std::runtime_error("coordinator exited; see " + dir + "/coordinator.log");
      measured = measured_rounds();
      std::cerr << "\r" << measured << "/" << o.rounds << " lease-expiry rounds, " << stats.offers << " offers answered, "
                << stats.launches << " launches (" << stats.refused << " refused)   " << std::flush;
      if (elapsed_s() > o.timeout_s) {
        std::cerr << "\ntime limit reached\n";
        break;
      }
    }
  }
  std::cerr << "\n";

  // Figures: rounds triggered by lease expiry, after the start-up rounds.
  store::Database db(db_path, /*read_only=*/true);
  auto st = db.prepare(
      "SELECT id, event_at, started_at, offers_sent_at, auction_started_at, auction_finished_at, committed_at, grants_sent_at, "
      "free_gpus, apps, json_array_length(offered_to), granted FROM rounds WHERE trigger LIKE '%lease expiry%' "
      "AND grants_sent_at IS NOT NULL AND started_at > ? ORDER BY id");
  st.bind(1, first_round_after);
  std::vector<double> to_auction, auction, to_commit, to_send, sent, delivered, share, free_gpus, offered, granted;
  std::printf("\n%6s %9s %9s %9s %9s %9s %9s %6s %6s %7s\n", "round", "ev→auct", "auction", "→commit", "→sent", "ev→sent",
              "ev→deliv", "free", "offer", "granted");
  while (st.step()) {
    const std::int64_t id = st.int64(0);
    const double event = st.real(1), a0 = st.real(4), a1 = st.real(5), commit = st.real(6), send = st.real(7);
    const auto g = stats.last_grant_at.find(id);
    const double deliver = g == stats.last_grant_at.end() ? std::nan("") : g->second;
    to_auction.push_back((a0 - event) * 1e3);
    auction.push_back((a1 - a0) * 1e3);
    to_commit.push_back((commit - a1) * 1e3);
    to_send.push_back((send - commit) * 1e3);
    sent.push_back((send - event) * 1e3);
    if (!std::isnan(deliver)) delivered.push_back((deliver - event) * 1e3);
    share.push_back((a1 - a0) / (send - event));
    free_gpus.push_back(st.real(8));
    offered.push_back(st.real(10));
    granted.push_back(st.real(11));
    std::printf("%6lld %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %6.0f %6.0f %7.0f\n", static_cast<long long>(id), to_auction.back(),
                auction.back(), to_commit.back(), to_send.back(), sent.back(), (deliver - event) * 1e3, st.real(8),
                st.real(10), st.real(11));
  }
  const auto line = print_distribution;
  std::printf("\n%d nodelets × %d GPUs, %d apps, lease %s, batch window %s, heartbeat %s\n", o.nodelets, o.gpus_per_nodelet,
              o.apps, o.lease.c_str(), o.batch_window.c_str(), o.heartbeat.c_str());
  line("event → auction start", to_auction, "ms");
  line("auction (policy round)", auction, "ms");
  line("auction end → commit", to_commit, "ms");
  line("commit → grants sent", to_send, "ms");
  line("event → grants sent", sent, "ms");
  line("event → last grant delivered", delivered, "ms");
  std::vector<double> share_pct;
  for (double s : share) share_pct.push_back(s * 100);
  line("auction share of event → sent", share_pct, "%");
  line("free GPUs per round", free_gpus, "");
  line("apps offered per round", offered, "");
  line("GPUs granted per round", granted, "");
  long nodelet_rss = 0;
  for (auto& n : nodelets) nodelet_rss += bench::proc_status_kib(n.pid());
  std::printf("RSS: coordinator %ld MiB, %d nodelets %ld MiB in all; %ld offers answered, %ld bid rows, %ld launches (%ld refused)\n",
              bench::proc_status_kib(coordinator.pid()) / 1024, o.nodelets, nodelet_rss / 1024, stats.offers, stats.bid_rows,
              stats.launches, stats.refused);
  for (const auto& [cause, count] : stats.refusals) std::printf("  refused: %5ld  %s\n", count, cause.c_str());
  for (auto& n : nodelets) n.kill_and_wait(SIGTERM);
  coordinator.kill_and_wait(SIGTERM);
  if (o.state_dir.empty()) fs::remove_all(dir);
  return measured >= o.rounds ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.bin_dir = std::filesystem::canonical("/proc/self/exe").parent_path().string();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + ": needs a value");
      return argv[++i];
    };
    try {
      if (arg == "--nodelets") o.nodelets = std::stoi(value());
      else if (arg == "--gpus-per-nodelet") o.gpus_per_nodelet = std::stoi(value());
      else if (arg == "--apps") o.apps = std::stoi(value());
      else if (arg == "--rounds") o.rounds = std::stoi(value());
      else if (arg == "--lease") o.lease = value();
      else if (arg == "--batch-window") o.batch_window = value();
      else if (arg == "--heartbeat") o.heartbeat = value();
      else if (arg == "--bin") o.bin_dir = value();
      else if (arg == "--state") o.state_dir = value();
      else if (arg == "--seed") o.seed = std::stoull(value());
      else if (arg == "--timeout") o.timeout_s = std::stoi(value());
      else
        return themis::bench::usage_for("control_plane_bench", arg,
                                        "usage: control_plane_bench [--nodelets 64] [--gpus-per-nodelet 8] [--apps 200] [--rounds 30]\n"
                                        "       [--lease 5s] [--batch-window 200ms] [--heartbeat 5s] [--seed 1] [--timeout 900]\n"
                                        "       [--bin DIR (themis-coordinator, themis-nodelet; default: this binary's folder)] [--state DIR (kept)]\n");
    } catch (const std::exception& e) {
      std::cerr << "control_plane_bench: " << arg << ": " << e.what() << "\n";
      return 2;
    }
  }
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "control_plane_bench: " << e.what() << "\n";
    return 1;
  }
}
