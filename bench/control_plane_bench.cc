// Control-plane round latency (docs/performance.md "Control plane"): a real themis-coordinator and N
// real themis-nodelet processes with virtual GPUs on loopback, and A apps whose launchers are app
// agents held by this process, one ZeroMQ DEALER each, speaking the launcher protocol (docs/launcher.md):
// they attach, answer every offer with a bid from the bidder library (bidder/bid_generator.h), report
// ρ and demand, and launch their jobs (`sleep`, started by the nodelets) on the GPUs they are granted.
// As themis-launch does, an agent names the leases a launch acts on, puts no job on a lease about to end
// (launcher/agent.h, launch_margin), and relaunches a job only once its last attempt's ranks all exited.
// The apps are foreground launcher apps (the coordinator never places their jobs) and run no probe.
// Launches the coordinator refused are counted by cause (docs/protocols/control.md "Stale grants").
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
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bench/bench_support.h"
#include "bidder/bid_generator.h"
#include "coordinator/store/database.h"
#include "core/rng.h"
#include "core/topology.h"
#include "net/envelope.h"
#include "tests/integration/process.h"

namespace {

using namespace themis;
using bench::free_port;
using bench::print_distribution;
using bench::write_file;
using Clock = std::chrono::steady_clock;
using W = wire::Envelope::Body::Which;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

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

double slowdown(Locality l) {
  switch (l) {
    case Locality::kSameSlot:
    case Locality::kSameMachine: return 1.0;
    case Locality::kSameRack: return 1.1;
    case Locality::kCrossRack: return 1.3;
  }
  return 1.3;
}

// One app's agent: the launcher's side of the protocol, with a synthetic ρ model
// ρ = (elapsed + work·S(placement)/GPUs) / (work / demand), as in bench/auction_bench.cc.
struct Agent {
  std::int64_t app = 0;
  int gpus_per_job = 1;
  int jobs = 1;
  double work = 0;  // GPU-seconds
  double submitted_at = 0;
  std::unique_ptr<zmq::socket_t> socket;
  std::optional<Cluster> cluster;
  double lease_seconds = 0;
  std::vector<GpuIndex> held;
  struct Lease {
    std::int64_t id = 0;
    double expiry = 0;  // on this process's clock
  };
  std::map<GpuIndex, Lease> leases;  // held GPU -> its lease, as the last grant said
  struct Job {
    int attempt = 0;
    std::vector<GpuIndex> gpus;  // the current attempt's; empty: none launched (or refused)
    int exited = 0;              // ranks of the current attempt that exited
    bool lost = false;           // a GPU of it is no longer held: the coordinator is stopping it
    bool running() const { return !gpus.empty() && !lost && exited < static_cast<int>(gpus.size()); }
    // A new attempt may start once the last one's ranks have all exited (the coordinator refuses a
    // launch of a job it is still stopping).
    bool launchable() const { return gpus.empty() || exited >= static_cast<int>(gpus.size()); }
  };
  std::vector<Job> job_state;
  struct LaunchRequest {
    int job = 0;
    double sent_at = 0;
    double expiry = 0;  // the earliest expiry among its GPUs' leases, as the grant it acted on said
  };
  std::map<std::uint64_t, LaunchRequest> launch_requests;  // request id -> launch
  std::uint64_t next_request = 1;
  int demand() const { return gpus_per_job * jobs; }
  double rho(int gpus, Locality placement, double now) const {
    const double t_id = work / demand();
    if (gpus <= 0) return (now - submitted_at + work / gpus_per_job) / t_id;
    return (now - submitted_at + work * slowdown(placement) / gpus) / t_id;
  }
  void send(net::OutMessage& message) {
    auto frame = message.to_frame();
    socket->send(frame, zmq::send_flags::dontwait);
  }
};

// Why the coordinator refused a launch, from its answer and the lease the launch acted on.
std::string refusal_cause(const Agent::LaunchRequest& launch, wire::ErrorCode code, const std::string& message,
                          double answered_at) {
  if (code == wire::ErrorCode::STALE_GRANT) {
    if (launch.expiry <= launch.sent_at) return "stale grant: its lease had expired before the launch was sent";
    if (launch.expiry <= answered_at) return "stale grant: its lease expired while the launch was in flight";
    return "stale grant: its lease was ended before its expiry";
  }
  if (message.find("is not leased") != std::string::npos) {
    if (launch.expiry <= launch.sent_at) return "GPU not leased: its lease had expired before the launch was sent";
    if (launch.expiry <= answered_at) return "GPU not leased: its lease expired while the launch was in flight";
    return "GPU not leased: its lease was taken back before its expiry";
  }
  if (message.find("is not after attempt") != std::string::npos) return "attempt not after the coordinator's";
  for (const char* state : {"STARTING", "RUNNING", "STOPPING", "CANCELLED"}) {
    if (message.find(std::string(" is ") + state) != std::string::npos) return std::string("job is ") + state;
  }
  return message;
}

std::string spec_text(const std::string& name, int jobs, int gpus_per_job) {
  std::ostringstream s;
  s << "name = \"" << name << "\"\ncommand = [\"sleep\", \"100000\"]\n[hyperparameters]\nx = [";
  for (int j = 0; j < jobs; ++j) s << (j ? ", " : "") << j;
  s << "]\n[resources]\ngpus_per_job = " << gpus_per_job << "\n[checkpoint]\ngrace_period = \"1s\"\n";
  // Its launcher is this process's agent: the coordinator waits for it to attach and never places the app's
  // jobs itself (an app without a [scheduler] table would have its jobs placed by the coordinator until then).
  s << "[scheduler]\nlauncher = \"foreground\"\n";
  return s.str();
}

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
  std::vector<Agent> agents(static_cast<std::size_t>(o.apps));
  {
    zmq::socket_t client(context, zmq::socket_type::dealer);
    client.set(zmq::sockopt::linger, 0);
    client.connect(endpoint);
    const int gang[] = {1, 2, 4, 8};
    for (int i = 0; i < o.apps; ++i) {
      Agent& a = agents[static_cast<std::size_t>(i)];
      a.gpus_per_job = gang[rng.below(4)];
      a.jobs = 1 + static_cast<int>(rng.below(4));
      a.work = 3600.0 * static_cast<double>(1 + rng.below(48));
      a.job_state.resize(static_cast<std::size_t>(a.jobs));
      net::OutMessage out(static_cast<std::uint64_t>(i + 1));
      auto submit = out.body().initSubmit();
      submit.setSpec(spec_text("bench-" + std::to_string(i), a.jobs, a.gpus_per_job));
      submit.setSpecName("bench-" + std::to_string(i) + ".toml");
      auto frame = out.to_frame();
      client.send(frame, zmq::send_flags::none);
      zmq::message_t reply;
      zmq::pollitem_t item{client.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::seconds(30));
      if (!(item.revents & ZMQ_POLLIN) || !client.recv(reply)) throw std::runtime_error("no answer to submit");
      wire::ErrorCode code{};
      std::string error;
      auto in = net::InMessage::parse(reply, &code, &error);
      if (!in || in->which() != W::SUBMITTED) throw std::runtime_error("submit refused: " + error);
      a.app = in->envelope().getBody().getSubmitted().getApp();
      a.submitted_at = unix_now();
    }
  }
  for (auto& a : agents) {
    a.socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::dealer);
    a.socket->set(zmq::sockopt::linger, 0);
    a.socket->connect(endpoint);
    net::OutMessage out(a.next_request++);
    out.body().initAttach().setApp(a.app);
    a.send(out);
  }
  std::cout << o.apps << " apps submitted and attaching after " << elapsed_s() << " s\n";

  std::map<std::int64_t, double> last_grant_at;  // round -> last agent receive time
  std::map<std::int64_t, int> grants_in;         // round -> agents that received it
  long offers = 0, bids_rows = 0, launches = 0, refused = 0;
  std::map<std::string, long> refusals;  // cause -> count
  const double first_round_after = unix_now();
  auto measured_rounds = [&] {
    return static_cast<int>(query("SELECT count(*) FROM rounds WHERE trigger LIKE '%lease expiry%' AND grants_sent_at IS NOT NULL "
                                  "AND started_at > " + std::to_string(first_round_after)));
  };
  auto handle = [&](Agent& a, const net::InMessage& in) {
    const double now = unix_now();
    const auto body = in.envelope().getBody();
    switch (in.which()) {
      case W::ATTACHED: {
        ClusterSpec spec{"themis", {}};
        for (const auto host : body.getAttached().getHosts()) {
          ClusterSpec::MachineSpec m{host.getName(), host.getRack(), {}};
          for (const auto n : host.getGpusPerSlot()) m.gpus_per_slot.push_back(static_cast<int>(n));
          spec.machines.push_back(std::move(m));
        }
        a.cluster.emplace(spec);
        a.lease_seconds = body.getAttached().getLeaseMs() / 1000.0;
        for (const auto job : body.getAttached().getJobs()) {
          if (job.getJob() >= 0 && job.getJob() < static_cast<std::int64_t>(a.job_state.size())) {
            auto& state = a.job_state[static_cast<std::size_t>(job.getJob())];
            state.attempt = std::max(state.attempt, static_cast<int>(job.getAttempt()));
          }
        }
        break;
      }
      case W::OFFER: {
        ++offers;
        const auto offer_msg = body.getOffer();
        Offer offer{offer_msg.getRound(), {}};
        for (const auto g : offer_msg.getGpus()) offer.gpus.push_back(g);
        std::sort(offer.gpus.begin(), offer.gpus.end());
        std::vector<GpuIndex> held;
        for (GpuIndex g : a.held)
          if (!std::binary_search(offer.gpus.begin(), offer.gpus.end(), g)) held.push_back(g);
        const int usable = static_cast<int>(held.size()) / a.gpus_per_job * a.gpus_per_job;
        const double rho_no_new = a.rho(usable, Locality::kSameMachine, now + 1.0);
        net::OutMessage out(in.request_id());
        auto bid_msg = out.body().initBid();
        bid_msg.setApp(a.app);
        bid_msg.setRound(offer.round);
        bid_msg.setRhoNoNew(rho_no_new);
        Bid bid{a.app, rho_no_new, {}};
        const int remaining = a.demand() - static_cast<int>(held.size());
        if (a.cluster && remaining > 0) {
          bidder::BidRequest request{a.app, held, remaining, rho_no_new};
          bid = bidder::generate_bid(*a.cluster, offer, request,
                                     [&](int total, Locality placement) {
                                       const int gangs = total / a.gpus_per_job * a.gpus_per_job;
                                       return a.rho(gangs, placement, now);
                                     },
                                     bidder::BidSettings{32, 8, true});
          // Only whole gangs are useful to the app.
          std::erase_if(bid.rows, [&](const BidRow& r) { return (static_cast<int>(r.gpus.size()) + usable) % a.gpus_per_job != 0; });
        }
        auto rows = bid_msg.initRows(static_cast<unsigned>(bid.rows.size()));
        for (std::size_t r = 0; r < bid.rows.size(); ++r) {
          rows[static_cast<unsigned>(r)].setRho(bid.rows[r].rho);
          auto gpus = rows[static_cast<unsigned>(r)].initGpus(static_cast<unsigned>(bid.rows[r].gpus.size()));
          for (std::size_t g = 0; g < bid.rows[r].gpus.size(); ++g) gpus.set(static_cast<unsigned>(g), bid.rows[r].gpus[g]);
        }
        bids_rows += static_cast<long>(bid.rows.size());
        a.send(out);
        break;
      }
      case W::GRANT: {
        const auto grant = body.getGrant();
        const auto round = grant.getRound();
        if (round > 0) {
          last_grant_at[round] = std::max(last_grant_at[round], now);
          ++grants_in[round];
        }
        a.held.clear();
        a.leases.clear();
        // Expiries on this process's clock: a lease has (expiry - sentAt) left as the grant arrives.
        const double to_local = grant.getSentAt() > 0 ? now - grant.getSentAt() : 0;
        for (const auto lease : grant.getLeases()) {
          a.held.push_back(lease.getGpu());
          a.leases[lease.getGpu()] = {lease.getId(), lease.getExpiry() + to_local};
        }
        std::sort(a.held.begin(), a.held.end());
        // Jobs on GPUs no longer held are being stopped by the coordinator.
        std::set<GpuIndex> busy;
        for (auto& job : a.job_state) {
          const bool kept = std::all_of(job.gpus.begin(), job.gpus.end(),
                                        [&](GpuIndex g) { return std::binary_search(a.held.begin(), a.held.end(), g); });
          if (!kept && job.running()) job.lost = true;
          if (job.running()) busy.insert(job.gpus.begin(), job.gpus.end());
        }
        // As themis-launch does (launcher/agent.h, launch_margin): no job goes onto a lease about to end; the
        // grant of the round that re-auctions it says whether the app keeps it.
        const double margin = std::min(1.0, a.lease_seconds / 10);
        std::vector<GpuIndex> idle;
        for (GpuIndex g : a.held)
          if (!busy.count(g) && a.leases[g].expiry >= now + margin) idle.push_back(g);
        for (std::size_t j = 0; j < a.job_state.size(); ++j) {
          auto& job = a.job_state[j];
          if (!job.launchable() || static_cast<int>(idle.size()) < a.gpus_per_job) continue;
          job.gpus.assign(idle.begin(), idle.begin() + a.gpus_per_job);
          job.exited = 0;
          job.lost = false;
          idle.erase(idle.begin(), idle.begin() + a.gpus_per_job);
          const std::uint64_t request = a.next_request++;
          net::OutMessage out(request);
          auto launch = out.body().initLaunchJob();
          launch.setApp(a.app);
          launch.setJob(static_cast<std::int64_t>(j));
          launch.setAttempt(static_cast<std::uint32_t>(++job.attempt));
          auto gpus = launch.initGpus(static_cast<unsigned>(job.gpus.size()));
          for (std::size_t g = 0; g < job.gpus.size(); ++g) gpus.set(static_cast<unsigned>(g), job.gpus[g]);
          auto named = launch.initLeases(static_cast<unsigned>(job.gpus.size()));
          for (std::size_t g = 0; g < job.gpus.size(); ++g) named.set(static_cast<unsigned>(g), a.leases[job.gpus[g]].id);
          double expiry = std::numeric_limits<double>::infinity();
          for (GpuIndex g : job.gpus) expiry = std::min(expiry, a.leases[g].expiry);
          a.launch_requests[request] = {static_cast<int>(j), unix_now(), expiry};
          a.send(out);
          ++launches;
        }
        net::OutMessage status(a.next_request++);
        auto msg = status.body().initAppStatus();
        msg.setApp(a.app);
        const int usable = static_cast<int>(a.held.size()) / a.gpus_per_job * a.gpus_per_job;
        msg.setRho(a.rho(usable, Locality::kSameMachine, now));
        msg.setDemand(static_cast<std::uint32_t>(std::max(0, a.demand() - static_cast<int>(a.held.size()))));
        msg.setBestLoss(std::nan(""));
        msg.setSummary(std::to_string(a.held.size()) + " GPUs");
        a.send(status);
        break;
      }
      case W::ERROR: {
        if (const auto it = a.launch_requests.find(in.request_id()); it != a.launch_requests.end()) {
          a.job_state[static_cast<std::size_t>(it->second.job)].gpus.clear();
          ++refused;
          ++refusals[refusal_cause(it->second, body.getError().getCode(), body.getError().getMessage().cStr(), now)];
          a.launch_requests.erase(it);
        }
        break;
      }
      case W::ACK: a.launch_requests.erase(in.request_id()); break;
      case W::EXITED: {
        const auto job = static_cast<std::size_t>(body.getExited().getJob());
        if (job < a.job_state.size() && static_cast<int>(body.getExited().getAttempt()) == a.job_state[job].attempt)
          ++a.job_state[job].exited;
        break;
      }
      default: break;
    }
  };

  std::vector<zmq::pollitem_t> items;
  for (auto& a : agents) items.push_back({a.socket->handle(), 0, ZMQ_POLLIN, 0});
  int measured = 0;
  auto last_check = Clock::now();
  while (measured < o.rounds) {
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(10));
    for (std::size_t i = 0; i < agents.size(); ++i) {
      if (!(items[i].revents & ZMQ_POLLIN)) continue;
      for (int k = 0; k < 100; ++k) {
        zmq::message_t frame;
        if (!agents[i].socket->recv(frame, zmq::recv_flags::dontwait)) break;
        wire::ErrorCode code{};
        std::string error;
        auto in = net::InMessage::parse(frame, &code, &error);
        if (in) handle(agents[i], *in);
      }
    }
    if (Clock::now() - last_check > std::chrono::seconds(2)) {
      last_check = Clock::now();
      if (!coordinator.running()) throw std::runtime_error("coordinator exited; see " + dir + "/coordinator.log");
      measured = measured_rounds();
      std::cerr << "\r" << measured << "/" << o.rounds << " lease-expiry rounds, " << offers << " offers answered, "
                << launches << " launches (" << refused << " refused)   " << std::flush;
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
    const auto g = last_grant_at.find(id);
    const double deliver = g == last_grant_at.end() ? std::nan("") : g->second;
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
              bench::proc_status_kib(coordinator.pid()) / 1024, o.nodelets, nodelet_rss / 1024, offers, bids_rows, launches, refused);
  for (const auto& [cause, count] : refusals) std::printf("  refused: %5ld  %s\n", count, cause.c_str());
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
      else {
        std::cerr << "usage: control_plane_bench [--nodelets 64] [--gpus-per-nodelet 8] [--apps 200] [--rounds 30]\n"
                     "       [--lease 5s] [--batch-window 200ms] [--heartbeat 5s] [--seed 1] [--timeout 900]\n"
                     "       [--bin DIR (themis-coordinator, themis-nodelet; default: this binary's folder)] [--state DIR (kept)]\n";
        return 2;
      }
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
