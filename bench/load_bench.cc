// Load (docs/reliability.md "Load"): a real themis-coordinator with CURVE and N real themis-nodelet
// processes with virtual GPUs on loopback.
//
// Burst: C client threads, each with its own enrolled key and DEALER (net::RequestClient, the path
// themisctl takes), submit S apps in all as fast as they can, one request at a time each. Every
// submission carries a token (its app name), and one that gets no answer within --submit-timeout-ms is
// sent again on the same socket with the same token, up to --submit-attempts times in all, as themisctl
// does (--no-token: no token, the behaviour before tokens, for comparison). Each client then sends one
// query with a long timeout on its socket, so every request it sent has been handled before the apps
// table is read. The table must hold exactly one app per acknowledged submission: each app's name says
// which client and submission made it, so a lost or duplicated submission shows up by name and id.
//
// Active: admission control caps the admitted demand at --active GPUs' worth, so with one 1-GPU job
// per app --active apps are active over the cluster's GPUs and the rest wait in the admission queue.
// Jobs are `sleep --job-seconds`, started by the nodelets; a finished app lets the next queued one in.
// Short leases keep lease-expiry rounds coming. For --duration seconds it samples the coordinator's
// memory and the database size, then reports the rounds' latency from the rounds table.
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <latch>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "coordinator/store/database.h"
#include "net/curve_keys.h"
#include "net/request_client.h"
#include "tests/integration/process.h"

namespace {

using namespace themis;
using bench::print_distribution;
using Clock = std::chrono::steady_clock;
using W = wire::Envelope::Body::Which;

struct Options {
  int clients = 8;
  int submissions = 10000;
  int nodelets = 32;
  int gpus_per_nodelet = 8;
  int machines_per_rack = 8;
  int active = 1000;
  int job_seconds = 60;
  int duration_s = 240;
  int sample_every_s = 10;
  int submit_timeout_ms = 30000;
  int submit_attempts = 2;
  bool tokens = true;
  std::string lease = "10s";
  std::string batch_window = "200ms";
  std::string heartbeat = "2s";
  std::string bin_dir;
  std::string state_dir;  // kept when given
};

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string client_name(int c) {
  char name[32];
  std::snprintf(name, sizeof name, "client-%02d", c);
  return name;
}

std::string app_name(int client, int n) {
  char name[64];
  std::snprintf(name, sizeof name, "load-c%02d-%06d", client, n);
  return name;
}

std::string host_name(int n) {
  char host[32];
  std::snprintf(host, sizeof host, "gpu%03d", n);
  return host;
}

void must_run(const std::vector<std::string>& argv) {
  const auto r = testing::run_command(argv);
  if (r.code != 0) throw std::runtime_error(argv[0] + " " + argv[1] + " failed: " + r.out);
}

long file_kib(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size / 1024) : 0;
}

// What one client saw of its submissions.
struct ClientResult {
  std::map<std::string, std::int64_t> acked;  // app name -> app id from Submitted
  std::vector<double> latency_ms;             // per answered request, retries included
  std::vector<std::string> errors;
  std::set<std::string> retried;  // names sent again after a timeout
  int resends = 0;                 // requests sent again, in all
  int unanswered = 0;
  bool drained = false;            // the closing query was answered: the coordinator handled every request
};

ClientResult run_client(const Options& o, const std::string& endpoint, const std::string& keys, int client, int count,
                        std::latch& start) {
  ClientResult result;
  net::ClientOptions options;
  options.endpoint = endpoint;
  options.own_keys = net::read_certificate(keys + "/" + client_name(client) + ".key_secret");
  options.server_public_key = net::read_certificate(keys + "/coordinator.key").public_key;
  options.timeout = std::chrono::milliseconds(o.submit_timeout_ms);
  net::RequestClient rpc(options);
  start.arrive_and_wait();
  for (int n = 0; n < count; ++n) {
    const std::string name = app_name(client, n);
    const std::string spec = "name = \"" + name + "\"\ncommand = [\"sleep\", \"" + std::to_string(o.job_seconds) +
                             "\"]\n[resources]\ngpus_per_job = 1\n[checkpoint]\ngrace_period = \"1s\"\n";
    bool answered = false;
    for (int attempt = 0; attempt < o.submit_attempts && !answered; ++attempt) {
      net::OutMessage out(rpc.next_request_id());
      auto submit = out.body().initSubmit();
      submit.setSpec(spec);
      submit.setSpecName(name + ".toml");
      if (o.tokens) submit.setToken(name);
      if (attempt > 0) ++result.resends;
      const auto sent = Clock::now();
      const auto reply = rpc.call(out);
      if (!reply) {
        result.retried.insert(name);
        continue;
      }
      answered = true;
      result.latency_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
      if (reply->which() == W::SUBMITTED) {
        result.acked[name] = reply->envelope().getBody().getSubmitted().getApp();
      } else if (reply->which() == W::ERROR) {
        result.errors.push_back(name + ": " + std::string(reply->envelope().getBody().getError().getMessage()));
      } else {
        result.errors.push_back(name + ": unexpected reply");
      }
    }
    if (!answered) ++result.unanswered;
  }
  // Requests on one DEALER are handled in order: once this is answered, so are all the submits before it.
  // Sent again every 200 ms (same request id, so an earlier copy's answer counts) for up to 2 minutes.
  net::OutMessage drain(rpc.next_request_id());
  drain.body().initQuery().setKind(wire::QueryKind::WHOAMI);
  const auto give_up = Clock::now() + std::chrono::minutes(2);
  while (!result.drained && Clock::now() < give_up) {
    const auto reply = rpc.call(drain);
    if (reply) result.drained = reply->which() == W::QUERY_REPLY;
    else std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return result;
}

int run(const Options& o) {
  namespace fs = std::filesystem;
  std::string dir = o.state_dir;
  if (dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "themis-load-bench-XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
  } else {
    fs::create_directories(dir);
  }
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(bench::free_port());
  const std::string db_path = dir + "/themis.db";
  const std::string keys = dir + "/keys";
  const std::string config = dir + "/themis.toml";
  const int gpus = o.nodelets * o.gpus_per_nodelet;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.6f", static_cast<double>(o.active) / gpus);
  // The bench's users have no Unix accounts: their jobs run as root (docs/admin.md, "Job accounts").
  std::string users = "\n[users]\n";
  for (int c = 0; c < o.clients; ++c) users += client_name(c) + " = \"root\"\n";
  bench::write_file(config, "[cluster]\ncoordinator = \"" + endpoint + "\"\ncoordinator_key = \"" + keys +
                                "/coordinator.key\"\n\n[coordinator]\nlisten = \"" + endpoint + "\"\ndatabase = \"" + db_path +
                                "\"\nauthorized_keys = \"" + dir + "/authorized_keys\"\nsecret_key = \"" + keys +
                                "/coordinator.key_secret\"\nheartbeat_interval = \"" + o.heartbeat +
                                "\"\nheartbeat_lives = 3\nlease_duration = \"" + o.lease + "\"\nround_batch_window = \"" +
                                o.batch_window + "\"\npolicy = \"themis\"\n\n[admission]\nmax_demand_ratio = " + ratio + "\n" + users);
  std::cout << "state in " << dir << ", coordinator on " << endpoint << " (CURVE)\n";

  // Keys: the coordinator's, one user key per client, one node key per nodelet, enrolled with the real binaries.
  must_run({o.bin_dir + "/themisctl", "keygen", "coordinator", "--dir", keys});
  std::vector<std::pair<std::string, std::string>> principals;
  for (int c = 0; c < o.clients; ++c) principals.emplace_back(client_name(c), "user");
  for (int n = 0; n < o.nodelets; ++n) principals.emplace_back(host_name(n), "node");
  for (const auto& [name, role] : principals) {
    must_run({o.bin_dir + "/themisctl", "keygen", name, "--dir", keys});
    must_run({o.bin_dir + "/themis-coordinator", "-c", config, "enroll", name, keys + "/" + name + ".key", "--role", role});
  }

  testing::Process coordinator({o.bin_dir + "/themis-coordinator", "-c", config}, dir + "/coordinator.log");
  std::vector<testing::Process> nodelets;
  for (int n = 0; n < o.nodelets; ++n) {
    const std::string host = host_name(n);
    bench::write_file(dir + "/" + host + ".toml",
                      "[cluster]\ncoordinator = \"" + endpoint + "\"\ncoordinator_key = \"" + keys +
                          "/coordinator.key\"\n\n[nodelet]\nhost = \"" + host + "\"\nrack = \"rack-" +
                          std::to_string(n / o.machines_per_rack) + "\"\naddress = \"127.0.0.1\"\nsecret_key = \"" + keys +
                          "/" + host + ".key_secret\"\nwork_dir = \"" + dir + "/" + host +
                          "\"\ngrace_period = \"1s\"\nallow_root_jobs = true\nslots = " + bench::slots_toml(o.gpus_per_nodelet) + "\n");
    nodelets.emplace_back(std::vector<std::string>{o.bin_dir + "/themis-nodelet", "-c", dir + "/" + host + ".toml"},
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
  const pid_t pid = coordinator.pid();
  std::printf("%d nodelets up (%d GPUs) after %.1f s; coordinator RSS %ld KiB, HWM %ld KiB\n", o.nodelets, gpus, elapsed_s(),
              bench::proc_status_kib(pid), bench::proc_status_kib(pid, "VmHWM"));

  // ---------------------------------------------------------------- burst
  std::vector<ClientResult> results(static_cast<std::size_t>(o.clients));
  bool burst_ok = false;
  {
    std::latch go(o.clients + 1);
    std::vector<std::thread> threads;
    for (int c = 0; c < o.clients; ++c) {
      const int count = o.submissions / o.clients + (c < o.submissions % o.clients ? 1 : 0);
      threads.emplace_back([&, c, count] {
        try {
          results[static_cast<std::size_t>(c)] = run_client(o, endpoint, keys, c, count, go);
        } catch (const std::exception& e) {
          results[static_cast<std::size_t>(c)].errors.push_back(std::string("client failed: ") + e.what());
        }
      });
    }
    const long rss_before = bench::proc_status_kib(pid);
    const double burst_start = unix_now();
    go.arrive_and_wait();
    for (auto& t : threads) t.join();
    const double burst_s = unix_now() - burst_start;
    std::vector<double> latency;
    std::size_t acked = 0, errors = 0, retried = 0, resends = 0, unanswered = 0, undrained = 0;
    std::map<std::string, std::int64_t> acked_ids;
    for (const auto& r : results) {
      latency.insert(latency.end(), r.latency_ms.begin(), r.latency_ms.end());
      acked += r.acked.size();
      errors += r.errors.size();
      retried += r.retried.size();
      resends += static_cast<std::size_t>(r.resends);
      unanswered += static_cast<std::size_t>(r.unanswered);
      if (!r.drained) ++undrained;
      acked_ids.insert(r.acked.begin(), r.acked.end());
      for (std::size_t e = 0; e < std::min<std::size_t>(3, r.errors.size()); ++e) std::cout << "  error: " << r.errors[e] << "\n";
    }
    std::printf("\nburst: %d clients, %d submissions in %.1f s = %.0f submissions/s\n", o.clients, o.submissions, burst_s,
                o.submissions / burst_s);
    std::printf("answers: %zu acknowledged, %zu errors, %zu never answered; %zu submissions retried after a %d ms timeout "
                "(%zu resends in all, at most %d attempts each, %s)\n",
                acked, errors, unanswered, retried, o.submit_timeout_ms, resends, o.submit_attempts,
                o.tokens ? "same token each time" : "no token");
    if (undrained) std::printf("%zu clients' closing query went unanswered: the table may still change\n", undrained);
    print_distribution("submit latency (request → answer)", latency, "ms");
    std::printf("coordinator RSS before %ld KiB, after %ld KiB, HWM %ld KiB\n", rss_before, bench::proc_status_kib(pid),
                bench::proc_status_kib(pid, "VmHWM"));
    {
      // Rounds the burst's arrivals triggered while it lasted: the loop serves requests and rounds in turn.
      store::Database db(db_path, /*read_only=*/true);
      auto st = db.prepare("SELECT (grants_sent_at - event_at) * 1e3 FROM rounds WHERE grants_sent_at IS NOT NULL "
                           "AND started_at BETWEEN ? AND ?");
      st.bind(1, burst_start);
      st.bind(2, burst_start + burst_s);
      std::vector<double> during;
      while (st.step()) during.push_back(st.real(0));
      print_distribution("rounds during the burst: event → sent", during, "ms");
    }

    // The apps table against the answers: exactly one app per acknowledged submission.
    store::Database db(db_path, /*read_only=*/true);
    auto st = db.prepare("SELECT id, name FROM apps WHERE name LIKE 'load-c%'");
    std::map<std::string, std::vector<std::int64_t>> stored;
    std::size_t rows = 0;
    while (st.step()) {
      stored[st.text(1)].push_back(st.int64(0));
      ++rows;
    }
    std::size_t lost = 0, duplicated = 0, unacknowledged = 0, wrong_id = 0;
    for (const auto& [name, id] : acked_ids) {
      const auto it = stored.find(name);
      if (it == stored.end()) ++lost;
      else if (std::find(it->second.begin(), it->second.end(), id) == it->second.end()) ++wrong_id;
    }
    for (const auto& [name, ids] : stored) {
      if (ids.size() > 1) duplicated += ids.size() - 1;
      if (!acked_ids.count(name)) unacknowledged += ids.size();
    }
    std::printf("apps table: %zu rows for %zu acknowledged submissions: %zu lost, %zu duplicated, %zu with another id, "
                "%zu never acknowledged\n",
                rows, acked_ids.size(), lost, duplicated, wrong_id, unacknowledged);
    {
      auto repeats = db.prepare("SELECT count(*) FROM events WHERE kind = 'SubmitRepeated'");
      repeats.step();
      std::printf("apps whose submit came again and was answered with the app (SubmitRepeated, one per app): %lld\n",
                  static_cast<long long>(repeats.int64(0)));
    }
    // A submission whose every attempt timed out may still have made its app (once): counted apart, not as lost.
    burst_ok = !lost && !duplicated && !wrong_id && !errors && !undrained && unacknowledged <= unanswered &&
               acked + unanswered == static_cast<std::size_t>(o.submissions);
    if (!burst_ok) std::printf("BURST CHECK FAILED\n");
  }

  // ---------------------------------------------------------------- active
  const double active_start = unix_now();
  std::printf("\n%8s %9s %9s %9s %7s %7s %8s %8s %9s\n", "t (s)", "RSS KiB", "HWM KiB", "DB KiB", "active", "queued",
              "running", "done", "rounds");
  const auto active_until = Clock::now() + std::chrono::seconds(o.duration_s);
  while (true) {
    if (!coordinator.running()) throw std::runtime_error("coordinator exited; see " + dir + "/coordinator.log");
    store::Database db(db_path, /*read_only=*/true);
    auto count = [&](const std::string& sql) {
      auto st = db.prepare(sql);
      return st.step() ? st.int64(0) : 0;
    };
    std::printf("%8.0f %9ld %9ld %9ld %7lld %7lld %8lld %8lld %9lld\n", unix_now() - active_start, bench::proc_status_kib(pid),
                bench::proc_status_kib(pid, "VmHWM"), file_kib(db_path) + file_kib(db_path + "-wal"),
                static_cast<long long>(count("SELECT count(*) FROM apps WHERE state IN ('PENDING','RUNNING') AND admission IS NULL")),
                static_cast<long long>(count("SELECT count(*) FROM apps WHERE state IN ('PENDING','RUNNING') AND admission IS NOT NULL")),
                static_cast<long long>(count("SELECT count(*) FROM jobs WHERE state = 'RUNNING'")),
                static_cast<long long>(count("SELECT count(*) FROM apps WHERE state = 'COMPLETED'")),
                static_cast<long long>(count("SELECT count(*) FROM rounds")));
    std::fflush(stdout);
    if (Clock::now() >= active_until) break;
    std::this_thread::sleep_for(std::chrono::seconds(o.sample_every_s));
  }

  // Round latency from the coordinator's own timestamps (migration v3), during the active phase.
  {
    store::Database db(db_path, /*read_only=*/true);
    auto st = db.prepare(
        "SELECT trigger, event_at, auction_started_at, auction_finished_at, committed_at, grants_sent_at, apps, granted "
        "FROM rounds WHERE grants_sent_at IS NOT NULL AND started_at > ? ORDER BY id");
    st.bind(1, active_start);
    std::vector<double> to_auction, auction, to_commit, sent, sent_expiry, apps, granted;
    while (st.step()) {
      const double event = st.real(1), a0 = st.real(2), a1 = st.real(3), commit = st.real(4), send = st.real(5);
      to_auction.push_back((a0 - event) * 1e3);
      auction.push_back((a1 - a0) * 1e3);
      to_commit.push_back((commit - a1) * 1e3);
      sent.push_back((send - event) * 1e3);
      if (st.text(0).find("lease expiry") != std::string::npos) sent_expiry.push_back((send - event) * 1e3);
      apps.push_back(st.real(6));
      granted.push_back(st.real(7));
    }
    std::printf("\n%d nodelets × %d GPUs, %d apps admitted at most, jobs sleep %d s, lease %s, batch window %s, heartbeat %s, "
                "%d s\n",
                o.nodelets, o.gpus_per_nodelet, o.active, o.job_seconds, o.lease.c_str(), o.batch_window.c_str(),
                o.heartbeat.c_str(), o.duration_s);
    print_distribution("event → auction start", to_auction, "ms");
    print_distribution("auction (policy round)", auction, "ms");
    print_distribution("auction end → commit", to_commit, "ms");
    print_distribution("event → grants sent (all rounds)", sent, "ms");
    print_distribution("event → grants sent (lease expiry)", sent_expiry, "ms");
    print_distribution("apps in the round", apps, "");
    print_distribution("GPUs granted per round", granted, "");
  }
  long nodelet_rss = 0;
  for (auto& n : nodelets) nodelet_rss += bench::proc_status_kib(n.pid());
  std::printf("RSS: coordinator %ld KiB (HWM %ld KiB), %d nodelets %ld KiB in all; database %ld KiB (+ WAL %ld KiB)\n",
              bench::proc_status_kib(pid), bench::proc_status_kib(pid, "VmHWM"), o.nodelets, nodelet_rss, file_kib(db_path),
              file_kib(db_path + "-wal"));
  for (auto& n : nodelets) n.kill_and_wait(SIGTERM);
  coordinator.kill_and_wait(SIGTERM);
  if (o.state_dir.empty()) fs::remove_all(dir);
  return burst_ok ? 0 : 1;
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
      if (arg == "--clients") o.clients = std::stoi(value());
      else if (arg == "--submissions") o.submissions = std::stoi(value());
      else if (arg == "--nodelets") o.nodelets = std::stoi(value());
      else if (arg == "--gpus-per-nodelet") o.gpus_per_nodelet = std::stoi(value());
      else if (arg == "--active") o.active = std::stoi(value());
      else if (arg == "--job-seconds") o.job_seconds = std::stoi(value());
      else if (arg == "--duration") o.duration_s = std::stoi(value());
      else if (arg == "--sample-every") o.sample_every_s = std::stoi(value());
      else if (arg == "--submit-timeout-ms") o.submit_timeout_ms = std::stoi(value());
      else if (arg == "--submit-attempts") o.submit_attempts = std::stoi(value());
      else if (arg == "--no-token") o.tokens = false;
      else if (arg == "--lease") o.lease = value();
      else if (arg == "--batch-window") o.batch_window = value();
      else if (arg == "--heartbeat") o.heartbeat = value();
      else if (arg == "--bin") o.bin_dir = value();
      else if (arg == "--state") o.state_dir = value();
      else
        return themis::bench::usage_for("load_bench", arg,
                                        "usage: load_bench [--clients 8] [--submissions 10000] [--nodelets 32] [--gpus-per-nodelet 8]\n"
                                        "       [--active 1000] [--job-seconds 60] [--duration 240] [--sample-every 10]\n"
                                        "       [--submit-timeout-ms 30000] [--submit-attempts 2] [--no-token]\n"
                                        "       [--lease 10s] [--batch-window 200ms] [--heartbeat 2s]\n"
                                        "       [--bin DIR (themis-coordinator, themis-nodelet, themisctl; default: this binary's folder)]\n"
                                        "       [--state DIR (kept)]\n");
    } catch (const std::exception& e) {
      std::cerr << "load_bench: " << arg << ": " << e.what() << "\n";
      return 2;
    }
  }
  if (o.clients < 1 || o.submissions < 1 || o.nodelets < 1 || o.gpus_per_nodelet < 1 || o.active < 1 || o.submit_attempts < 1) {
    std::cerr << "load_bench: --clients, --submissions, --nodelets, --gpus-per-nodelet, --active and --submit-attempts must "
                 "be positive\n";
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines show up at once when piped to a file
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "load_bench: " << e.what() << "\n";
    return 1;
  }
}
