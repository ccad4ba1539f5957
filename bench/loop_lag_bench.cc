// Loop lag during a long auction (docs/performance.md "Loop lag during a long auction"): does the
// coordinator's loop keep reading heartbeats while a winner determination runs to its budget (docs/planner.md
// "The auction off the loop")?
//
// A real themis-coordinator (policy themis, filter "fixed", fairness_knob 0: every app bids; auction_budget
// --budget) and, in this process:
//   - H virtual nodelets, one ZeroMQ DEALER each on their own thread, speaking the heartbeat protocol
//     (docs/protocols/heartbeat.md): they register G GPUs each, heartbeat every --heartbeat, and time each
//     heartbeat from its send to its heartbeatAck. An acked heartbeat is one the coordinator read.
//   - A app agents (bench/launcher_agents.h) that attach and bid with the bidder library (up to --rows rows
//     over overlapping bundles of the same offer): a hard instance. They launch nothing, so the loop's work
//     is the heartbeats, the bids and the round itself.
// Hosts register first (an agent learns the topology when it attaches), then the apps are submitted, then
// every agent attaches in one burst inside the round batch window, so one round offers every GPU to every app.
//
// Reported: each round (auction seconds from rounds.auction_started_at/finished_at, its gap, its
// worst_loop_lag_ms); for the longest auction, the coordinator's loop turns over --log-threshold that
// overlapped it (its "slow loop turn" log lines, docs/admin.md "Loop health") and the turn that applied it,
// the heartbeats sent while it ran and how many were answered, their round trips, hosts declared down, how
// stale hosts.last_heartbeat got, the coordinator's CPU use and the load average. Exits 1 when no auction ran
// to 90% of its budget (the instance was solved sooner: nothing long was measured).
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bench/bench_support.h"
#include "bench/launcher_agents.h"
#include "coordinator/store/database.h"
#include "core/rng.h"
#include "net/envelope.h"
#include "tests/integration/process.h"

namespace {

using namespace themis;
using bench::unix_now;
using Clock = std::chrono::steady_clock;
using W = wire::Envelope::Body::Which;

struct Options {
  int hosts = 32;
  int gpus_per_host = 8;
  int hosts_per_rack = 4;
  int apps = 200;
  int rows = 64;                  // bid rows per app at most (the policy reads 64 at most)
  std::string budget = "10s";     // coordinator.auction_budget
  std::string heartbeat = "500ms";
  std::string batch_window = "2s";
  std::string log_threshold = "10ms";  // coordinator.slow_loop_threshold: turns longer than this are logged
  std::string bin_dir;
  std::string state_dir;  // kept when given
  std::uint64_t seed = 1;
  int timeout_s = 110;
};

double seconds_of(const std::string& duration) {
  const double value = std::stod(duration);
  if (duration.ends_with("ms")) return value / 1000.0;
  if (duration.ends_with("s")) return value;
  throw std::invalid_argument("duration '" + duration + "': expected e.g. 250ms or 10s");
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " / " + five + " / " + fifteen;
}

// CPU seconds (user + system) a process has used so far; 0 when it is gone.
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  // After "pid (comm) ": state is field 3, utime field 14, stime field 15.
  unsigned long long utime = 0, stime = 0;
  if (std::sscanf(stat.c_str() + close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) return 0;
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double load_average_1min() {
  std::ifstream in("/proc/loadavg");
  double one = 0;
  in >> one;
  return one;
}

// One heartbeat a virtual nodelet sent: by which host, when, and when its answer came back (NaN: never).
struct Beat {
  int host = 0;
  double sent = 0;
  double answered = std::nan("");
  bool acked = false;  // answered heartbeatAck (else notRegistered: the coordinator had declared the host down)
};

struct NodeletCounts {
  long registrations = 0;     // registered answers (one per host when no host was declared down)
  long not_registered = 0;    // heartbeats answered notRegistered: the coordinator had dropped the host
  long other_messages = 0;    // anything else the coordinator sent a host
};

// H virtual nodelets on one thread: register, then heartbeat every `interval` (hosts' phases spread over it)
// while `beating`; keep reading acks until `stop`.
class VirtualNodelets {
 public:
  VirtualNodelets(zmq::context_t& context, const std::string& endpoint, const Options& o) : interval_(seconds_of(o.heartbeat)) {
    for (int h = 0; h < o.hosts; ++h) {
      Host host;
      char name[32];
      std::snprintf(name, sizeof name, "gpu%03d", h);
      host.name = name;
      host.index = h;
      host.rack = "rack-" + std::to_string(h / o.hosts_per_rack);
      host.gpus = o.gpus_per_host;
      host.socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::dealer);
      host.socket->set(zmq::sockopt::linger, 0);
      host.socket->connect(endpoint);
      hosts_.push_back(std::move(host));
    }
  }
  void start() { thread_ = std::thread([this] { run(); }); }
  void stop_beating() { beating_ = false; }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  ~VirtualNodelets() { stop(); }
  // Valid once stop() returned.
  const std::vector<Beat>& beats() const { return beats_; }
  const NodeletCounts& counts() const { return counts_; }

 private:
  struct Host {
    std::string name, rack;
    int index = 0;
    int gpus = 0;
    std::unique_ptr<zmq::socket_t> socket;
    bool registered = false;
    double next_beat = 0;
    std::uint32_t seq = 0;
    std::uint64_t next_request = 1;
    std::map<std::uint64_t, std::size_t> in_flight;  // heartbeat request id -> index in beats_
  };

  static void send(Host& host, net::OutMessage& out) {
    auto frame = out.to_frame();
    (void)host.socket->send(frame, zmq::send_flags::dontwait);
  }
  void send_register(Host& host) {
    net::OutMessage out(host.next_request++);
    auto reg = out.body().initRegister();
    reg.setHost(host.name);
    reg.setRack(host.rack);
    reg.setAddress("127.0.0.1");
    reg.setNodeletVersion("0.1.0");
    auto slots = reg.initSlots(static_cast<unsigned>((host.gpus + 1) / 2));  // slots of two, as bench::slots_toml
    for (int s = 0; s < (host.gpus + 1) / 2; ++s) {
      const int in_slot = std::min(2, host.gpus - 2 * s);
      auto gpus = slots[static_cast<unsigned>(s)].initGpus(static_cast<unsigned>(in_slot));
      for (int g = 0; g < in_slot; ++g) {
        gpus[static_cast<unsigned>(g)].setLocalIndex(static_cast<std::uint32_t>(2 * s + g));
        gpus[static_cast<unsigned>(g)].setModel("declared");
      }
    }
    send(host, out);
  }
  void send_heartbeat(Host& host, double now) {
    const std::uint64_t id = host.next_request++;
    net::OutMessage out(id);
    out.body().initHeartbeat().setSeq(++host.seq);
    send(host, out);
    host.in_flight[id] = beats_.size();
    beats_.push_back({host.index, unix_now(), std::nan(""), false});
    host.next_beat = std::max(host.next_beat + interval_, now);
  }
  void handle(Host& host, std::size_t index, const zmq::message_t& frame) {
    wire::ErrorCode code{};
    std::string error;
    const auto in = net::InMessage::parse(frame, &code, &error);
    if (!in) {
      ++counts_.other_messages;
      return;
    }
    switch (in->which()) {
      case W::REGISTERED:
        ++counts_.registrations;
        host.registered = true;
        // Spread the hosts over the interval, so heartbeats arrive evenly rather than in a burst.
        host.next_beat = unix_now() + interval_ * static_cast<double>(index) / static_cast<double>(hosts_.size());
        break;
      case W::HEARTBEAT_ACK:
        if (const auto it = host.in_flight.find(in->request_id()); it != host.in_flight.end()) {
          beats_[it->second].answered = unix_now();
          beats_[it->second].acked = true;
          host.in_flight.erase(it);
        }
        break;
      case W::ERROR:
        if (in->envelope().getBody().getError().getCode() == wire::ErrorCode::NOT_REGISTERED) {
          ++counts_.not_registered;
          if (const auto it = host.in_flight.find(in->request_id()); it != host.in_flight.end()) {
            beats_[it->second].answered = unix_now();
            host.in_flight.erase(it);
          }
          if (host.registered) {
            host.registered = false;
            send_register(host);
          }
          break;
        }
        ++counts_.other_messages;
        break;
      default: ++counts_.other_messages; break;
    }
  }
  void run() {
    for (auto& host : hosts_) send_register(host);
    std::vector<zmq::pollitem_t> items;
    for (auto& host : hosts_) items.push_back({host.socket->handle(), 0, ZMQ_POLLIN, 0});
    while (!stop_) {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(2));
      for (std::size_t i = 0; i < hosts_.size(); ++i) {
        if (!(items[i].revents & ZMQ_POLLIN)) continue;
        while (true) {
          zmq::message_t frame;
          if (!hosts_[i].socket->recv(frame, zmq::recv_flags::dontwait)) break;
          handle(hosts_[i], i, frame);
        }
      }
      const double now = unix_now();
      if (!beating_) continue;
      for (auto& host : hosts_) {
        if (host.registered && now >= host.next_beat) send_heartbeat(host, now);
      }
    }
  }

  double interval_;
  std::vector<Host> hosts_;
  std::vector<Beat> beats_;
  NodeletCounts counts_;
  std::atomic<bool> beating_{true};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// One "slow loop turn" line of the coordinator's log: when it ended (unix time), how long it took, the phases.
struct SlowTurn {
  double ended = 0;
  double ms = 0;
  std::string phases;
};

// spdlog's default pattern: "[YYYY-MM-DD HH:MM:SS.mmm] [warning] slow loop turn: 12.3 ms (threshold 10 ms): ..."
std::vector<SlowTurn> slow_turns(const std::string& log_path) {
  std::vector<SlowTurn> turns;
  std::ifstream log(log_path);
  std::string line;
  const std::string marker = "slow loop turn: ";
  while (std::getline(log, line)) {
    const auto at = line.find(marker);
    if (at == std::string::npos) continue;
    std::tm tm{};
    int millis = 0;
    if (std::sscanf(line.c_str(), "[%d-%d-%d %d:%d:%d.%d]", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                    &tm.tm_sec, &millis) != 7) {
      continue;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    SlowTurn turn;
    turn.ended = static_cast<double>(std::mktime(&tm)) + millis / 1000.0;  // spdlog logs local time
    turn.ms = std::stod(line.substr(at + marker.size()));
    const auto colon = line.find("): ", at);
    turn.phases = colon == std::string::npos ? "" : line.substr(colon + 3);
    turns.push_back(std::move(turn));
  }
  return turns;
}

int run(const Options& o) {
  namespace fs = std::filesystem;
  std::string dir = o.state_dir;
  if (dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "themis-lag-bench-XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
  } else {
    fs::create_directories(dir);
  }
  const double budget_s = seconds_of(o.budget);
  const std::string load_at_start = load_average();
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(bench::free_port());
  const std::string db_path = dir + "/themis.db";
  const std::string log_path = dir + "/coordinator.log";
  bench::write_file(dir + "/themis.toml",
                    "[cluster]\ncoordinator = \"" + endpoint + "\"\n\n[coordinator]\nlisten = \"" + endpoint +
                        "\"\ndatabase = \"" + db_path + "\"\ninsecure = true\nheartbeat_interval = \"" + o.heartbeat +
                        "\"\nheartbeat_lives = 3\n"
                        // Long leases: no lease expires, so the rounds are the start-up ones alone.
                        "lease_duration = \"600s\"\nround_batch_window = \"" + o.batch_window +
                        "\"\npolicy = \"themis\"\nfilter = \"fixed\"\nfairness_knob = 0.0\nauction_budget = \"" + o.budget +
                        "\"\nslow_loop_threshold = \"" + o.log_threshold + "\"\nseed = " + std::to_string(o.seed) +
                        "\nprobe_duration = \"0s\"\n");
  std::cout << "state in " << dir << ", coordinator on " << endpoint << ", load average " << load_at_start << "\n";
  testing::Process coordinator({o.bin_dir + "/themis-coordinator", "-c", dir + "/themis.toml", "--insecure"}, log_path);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto query = [&](const std::string& sql) {
    store::Database db(db_path, /*read_only=*/true);
    auto st = db.prepare(sql);
    return st.step() && !st.is_null(0) ? st.real(0) : 0.0;
  };
  const auto start = Clock::now();
  auto elapsed_s = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  zmq::context_t context(1);
  VirtualNodelets nodelets(context, endpoint, o);
  nodelets.start();
  bench::wait_for_nodelets(query, o.hosts, coordinator, dir);
  std::cout << o.hosts << " virtual nodelets up (" << o.hosts * o.gpus_per_host << " GPUs, heartbeat every " << o.heartbeat
            << ") after " << elapsed_s() << " s\n";

  Rng rng(o.seed);
  std::vector<bench::Agent> agents(static_cast<std::size_t>(o.apps));
  for (auto& a : agents) bench::draw_app(a, rng);
  bench::submit_apps(context, endpoint, agents);
  // The submissions' round (no launcher attached yet: nothing to offer) passes before the agents attach, so
  // the next round, triggered by the first attach, waits out the batch window with every agent attached.
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds_of(o.batch_window) + 0.5));
  bench::attach_agents(context, endpoint, agents);
  std::cout << o.apps << " apps submitted and attaching after " << elapsed_s() << " s\n";

  bench::AgentSettings settings;
  settings.bids = bidder::BidSettings{o.rows, 8, true};
  settings.launch_jobs = false;
  bench::AgentStats stats;
  struct Sample {
    double at = 0, load = 0, stalest_heartbeat = 0, coordinator_cpu = 0;
  };
  std::vector<Sample> samples;
  std::optional<double> done_at;
  auto last_check = Clock::now();
  while (!done_at || unix_now() < *done_at + 2.0) {
    bench::serve_agents(agents, std::chrono::milliseconds(10), settings, stats);
    if (Clock::now() - last_check < std::chrono::seconds(1)) continue;
    last_check = Clock::now();
    if (!coordinator.running()) throw std::runtime_error("coordinator exited; see " + log_path);
    const double now = unix_now();
    samples.push_back({now, load_average_1min(), now - query("SELECT min(last_heartbeat) FROM hosts"), cpu_seconds(coordinator.pid())});
    // Done once a round that had bidders has sent its grants (and recorded its loop lag).
    if (!done_at && query("SELECT count(*) FROM rounds WHERE json_array_length(offered_to) > 0 AND grants_sent_at IS NOT NULL "
                          "AND worst_loop_lag_ms IS NOT NULL") > 0) {
      done_at = now;
    }
    std::cerr << "\r" << static_cast<int>(elapsed_s()) << " s: " << stats.offers << " offers answered, " << stats.bid_rows
              << " bid rows, load " << samples.back().load << "   " << std::flush;
    if (elapsed_s() > o.timeout_s) {
      std::cerr << "\ntime limit reached\n";
      break;
    }
  }
  std::cerr << "\n";
  // Hosts are declared down once their heartbeats stop: what counts is the state before that.
  const double hosts_not_up = query("SELECT count(*) FROM hosts WHERE state != 'up'");
  const double beats_stopped_at = unix_now();
  nodelets.stop_beating();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // acks still on their way
  nodelets.stop();
  const std::string load_at_end = load_average();

  // Rounds.
  store::Database db(db_path, /*read_only=*/true);
  auto rounds = db.prepare(
      "SELECT id, trigger, free_gpus, json_array_length(offered_to), granted, auction_started_at, auction_finished_at, "
      "json_extract(outcome, '$.auction_gap'), worst_loop_lag_ms, committed_at FROM rounds ORDER BY id");
  std::printf("\n%5s %-34s %5s %7s %7s %9s %7s %12s\n", "round", "trigger", "free", "offered", "granted", "auction s", "gap",
              "worst lag ms");
  std::int64_t longest = 0;
  double a0 = 0, a1 = 0, longest_lag = 0, committed = 0;
  while (rounds.step()) {
    const double started = rounds.is_null(5) ? 0 : rounds.real(5), finished = rounds.is_null(6) ? 0 : rounds.real(6);
    std::printf("%5lld %-34.34s %5lld %7lld %7lld %9.2f %7.3f %12.1f\n", static_cast<long long>(rounds.int64(0)),
                rounds.text(1).c_str(), static_cast<long long>(rounds.int64(2)), static_cast<long long>(rounds.int64(3)),
                static_cast<long long>(rounds.int64(4)), finished - started, rounds.is_null(7) ? std::nan("") : rounds.real(7),
                rounds.is_null(8) ? std::nan("") : rounds.real(8));
    if (finished - started > a1 - a0) {
      longest = rounds.int64(0);
      a0 = started;
      a1 = finished;
      longest_lag = rounds.is_null(8) ? std::nan("") : rounds.real(8);
      committed = rounds.is_null(9) ? std::nan("") : rounds.real(9);
    }
  }
  if (longest == 0) {
    std::cerr << "loop_lag_bench: no round ran an auction; see " << log_path << "\n";
    coordinator.kill_and_wait(SIGTERM);
    return 1;
  }
  auto bids = db.prepare(
      "SELECT count(*), coalesce(sum(json_array_length(bid_rows)), 0) FROM bids WHERE round_id = ? AND rho_no_new IS NOT NULL");
  bids.bind(1, longest);
  bids.step();
  const long bidders = static_cast<long>(bids.int64(0)), rows = static_cast<long>(bids.int64(1));
  const double hosts_down = query("SELECT count(*) FROM events WHERE kind = 'HostDown' AND ts < " + std::to_string(beats_stopped_at));
  const double hosts_down_during = query("SELECT count(*) FROM events WHERE kind = 'HostDown' AND ts BETWEEN " + std::to_string(a0) +
                                         " AND " + std::to_string(a1));

  // Loop turns over the log threshold, in three kinds: the turn that started the auction (it sets
  // auction_started_at, then prepares the round record and hands the policy to its thread), the turns while the
  // policy ran (they began after auction_started_at and ended before auction_finished_at), and the turn that
  // applied it (it sets auction_finished_at, settles the outcome and commits). Log times are to the millisecond.
  const auto turns = slow_turns(log_path);
  const SlowTurn* starting = nullptr;
  const SlowTurn* worst_while_solving = nullptr;
  const SlowTurn* applying = nullptr;
  std::vector<const SlowTurn*> over_100_while_solving;
  int while_solving = 0;
  for (const auto& turn : turns) {
    const double began = turn.ended - turn.ms / 1e3;
    if (!starting && began <= a0 + 0.001 && turn.ended >= a0 - 0.001) {
      starting = &turn;
    } else if (began > a0 && turn.ended < a1) {
      ++while_solving;
      if (turn.ms > 100) over_100_while_solving.push_back(&turn);
      if (!worst_while_solving || turn.ms > worst_while_solving->ms) worst_while_solving = &turn;
    } else if (!applying && turn.ended >= a1 && began <= a1 + 0.001) {
      applying = &turn;
    }
  }

  // Heartbeats sent while the auction ran, and the others (the same load, no auction) to compare with.
  struct BeatCounts {
    long sent = 0, acked = 0, not_registered = 0;
    std::vector<double> rtt_ms;
  };
  BeatCounts during_auction, outside_auction;
  std::map<int, double> last_sent;  // host -> its previous heartbeat's send time
  double widest_send_gap = 0;       // this process's own scheduling: heartbeats it sent late
  for (const auto& beat : nodelets.beats()) {
    if (const auto it = last_sent.find(beat.host); it != last_sent.end()) widest_send_gap = std::max(widest_send_gap, beat.sent - it->second);
    last_sent[beat.host] = beat.sent;
    BeatCounts& c = beat.sent >= a0 && beat.sent <= a1 ? during_auction : outside_auction;
    ++c.sent;
    if (beat.acked) {
      ++c.acked;
      c.rtt_ms.push_back((beat.answered - beat.sent) * 1e3);
    } else if (!std::isnan(beat.answered)) {
      ++c.not_registered;
    }
  }
  double stalest = 0, load_during_max = 0;
  const Sample* first_in_auction = nullptr;
  const Sample* last_in_auction = nullptr;
  for (const auto& s : samples) {
    if (s.at < a0 || s.at > a1) continue;
    if (!first_in_auction) first_in_auction = &s;
    last_in_auction = &s;
    stalest = std::max(stalest, s.stalest_heartbeat);
    load_during_max = std::max(load_during_max, s.load);
  }

  const double auction_s = a1 - a0;
  std::printf("\n%d virtual nodelets × %d GPUs, %d apps (bids of up to %d rows), auction_budget %s, heartbeat %s, "
              "filter fixed, fairness_knob 0\n",
              o.hosts, o.gpus_per_host, o.apps, o.rows, o.budget.c_str(), o.heartbeat.c_str());
  std::printf("longest auction: round %lld, %ld bidders, %ld bid rows: %.2f s (%.2f × the budget)\n",
              static_cast<long long>(longest), bidders, rows, auction_s, auction_s / budget_s);
  if (starting) std::printf("turn that started the auction: %.1f ms: %s\n", starting->ms, starting->phases.c_str());
  if (worst_while_solving) {
    std::printf("worst loop turn while the policy ran: %.1f ms (%d turns over %s, %zu over 100 ms): %s\n", worst_while_solving->ms,
                while_solving, o.log_threshold.c_str(), over_100_while_solving.size(), worst_while_solving->phases.c_str());
  } else {
    std::printf("worst loop turn while the policy ran: none over %s\n", o.log_threshold.c_str());
  }
  for (const SlowTurn* turn : over_100_while_solving) {
    std::printf("  over 100 ms: began %+.2f s after auction_started_at, %.1f ms: %s\n", turn->ended - turn->ms / 1e3 - a0, turn->ms,
                turn->phases.c_str());
  }
  if (applying) std::printf("turn that applied the auction: %.1f ms: %s\n", applying->ms, applying->phases.c_str());
  std::printf("rounds.worst_loop_lag_ms of round %lld (every turn since the previous round, the applying one up to its "
              "commit): %.1f ms; commit %.0f ms after the auction\n",
              static_cast<long long>(longest), longest_lag, (committed - a1) * 1e3);
  std::printf("heartbeats sent while the auction ran: %ld, acked %ld (%.1f %%), answered notRegistered %ld, unanswered %ld\n",
              during_auction.sent, during_auction.acked,
              during_auction.sent ? 100.0 * static_cast<double>(during_auction.acked) / static_cast<double>(during_auction.sent) : 0.0,
              during_auction.not_registered, during_auction.sent - during_auction.acked - during_auction.not_registered);
  bench::print_distribution("  heartbeat → ack, during the auction", during_auction.rtt_ms, "ms");
  bench::print_distribution("  heartbeat → ack, the rest of the run", outside_auction.rtt_ms, "ms");
  std::printf("the rest of the run: %ld heartbeats sent, acked %ld, answered notRegistered %ld, unanswered %ld\n",
              outside_auction.sent, outside_auction.acked, outside_auction.not_registered,
              outside_auction.sent - outside_auction.acked - outside_auction.not_registered);
  std::printf("hosts declared down: %.0f during the auction, %.0f in the whole run (%.0f not up when the heartbeats stopped); "
              "oldest hosts.last_heartbeat sampled during the auction %.2f s; widest gap between one host's heartbeats as sent "
              "by this process %.0f ms (interval %s)\n",
              hosts_down_during, hosts_down, hosts_not_up, stalest, widest_send_gap * 1e3, o.heartbeat.c_str());
  const double down_after = seconds_of(o.heartbeat) * 3;  // heartbeat_lives = 3
  if (widest_send_gap >= down_after) {
    std::printf("note: this process sent one host's heartbeats %.0f ms apart, past interval × lives (%.0f ms): a host declared "
                "down then was silenced by this process's own stall, not by the coordinator\n",
                widest_send_gap * 1e3, down_after * 1e3);
  }
  if (first_in_auction && last_in_auction != first_in_auction) {
    std::printf("coordinator CPU while the auction ran: %.2f s per second of wall clock (all its threads; sampled over %.1f s)\n",
                (last_in_auction->coordinator_cpu - first_in_auction->coordinator_cpu) / (last_in_auction->at - first_in_auction->at),
                last_in_auction->at - first_in_auction->at);
  }
  std::printf("load average: %s at the start, max 1-min %.2f during the auction, %s at the end (%u CPUs)\n",
              load_at_start.c_str(), load_during_max, load_at_end.c_str(), std::thread::hardware_concurrency());
  auto met = [](const SlowTurn* turn) { return !turn || turn->ms <= 100 ? "met" : "NOT met"; };
  std::printf("target ≤ 100 ms: while the policy ran %s; the turn that started it %s; the turn that applied it %s. "
              "Every heartbeat sent during the auction acked: %s\n",
              met(worst_while_solving), met(starting), met(applying), during_auction.sent == during_auction.acked && hosts_down_during == 0 ? "yes" : "NO");
  const bool long_auction = auction_s >= 0.9 * budget_s;
  if (!long_auction) {
    std::printf("note: the auction ended well before its budget (the instance was solved): this run measured no long "
                "auction; make it harder (--apps, --rows, --hosts)\n");
  }
  coordinator.kill_and_wait(SIGTERM);
  if (o.state_dir.empty()) fs::remove_all(dir);
  return long_auction ? 0 : 1;
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
      if (arg == "--hosts") o.hosts = std::stoi(value());
      else if (arg == "--gpus-per-host") o.gpus_per_host = std::stoi(value());
      else if (arg == "--apps") o.apps = std::stoi(value());
      else if (arg == "--rows") o.rows = std::stoi(value());
      else if (arg == "--budget") o.budget = value();
      else if (arg == "--heartbeat") o.heartbeat = value();
      else if (arg == "--batch-window") o.batch_window = value();
      else if (arg == "--log-threshold") o.log_threshold = value();
      else if (arg == "--bin") o.bin_dir = value();
      else if (arg == "--state") o.state_dir = value();
      else if (arg == "--seed") o.seed = std::stoull(value());
      else if (arg == "--timeout") o.timeout_s = std::stoi(value());
      else
        return themis::bench::usage_for("loop_lag_bench", arg,
                                        "usage: loop_lag_bench [--hosts 32] [--gpus-per-host 8] [--apps 200] [--rows 64] [--budget 10s]\n"
                                        "       [--heartbeat 500ms] [--batch-window 2s] [--log-threshold 10ms] [--seed 1] [--timeout 110]\n"
                                        "       [--bin DIR (themis-coordinator; default: this binary's folder)] [--state DIR (kept)]\n");
      seconds_of(o.budget);
      seconds_of(o.heartbeat);
      seconds_of(o.batch_window);
      if (o.hosts < 1 || o.gpus_per_host < 1 || o.apps < 1 || o.rows < 1) throw std::invalid_argument("must be >= 1");
    } catch (const std::exception& e) {
      std::cerr << "loop_lag_bench: " << arg << ": " << e.what() << "\n";
      return 2;
    }
  }
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "loop_lag_bench: " << e.what() << "\n";
    return 1;
  }
}
