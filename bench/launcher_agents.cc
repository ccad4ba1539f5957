#include "bench/launcher_agents.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "bidder/slowdown.h"

namespace themis::bench {
namespace {

using W = wire::Envelope::Body::Which;

// The bidder library's slowdown priors (same machine 1.0, same rack 1.1, cross rack 1.3).
double slowdown(Locality l) { return bidder::SlowdownModel().prior(l); }

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

void on_offer(Agent& a, const net::InMessage& in, const AgentSettings& settings, AgentStats& stats, double now) {
  ++stats.offers;
  const auto offer_msg = in.envelope().getBody().getOffer();
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
                               settings.bids);
    // Only whole gangs are useful to the app.
    std::erase_if(bid.rows, [&](const BidRow& r) { return (static_cast<int>(r.gpus.size()) + usable) % a.gpus_per_job != 0; });
  }
  auto rows = bid_msg.initRows(static_cast<unsigned>(bid.rows.size()));
  for (std::size_t r = 0; r < bid.rows.size(); ++r) {
    rows[static_cast<unsigned>(r)].setRho(bid.rows[r].rho);
    rows[static_cast<unsigned>(r)].setScope(static_cast<std::uint8_t>(bid.rows[r].scope));
    auto gpus = rows[static_cast<unsigned>(r)].initGpus(static_cast<unsigned>(bid.rows[r].gpus.size()));
    for (std::size_t g = 0; g < bid.rows[r].gpus.size(); ++g) gpus.set(static_cast<unsigned>(g), bid.rows[r].gpus[g]);
  }
  stats.bid_rows += static_cast<long>(bid.rows.size());
  a.send(out);
}

void launch_on_idle_gpus(Agent& a, AgentStats& stats, double now) {
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
    ++stats.launches;
  }
}

void on_grant(Agent& a, const net::InMessage& in, const AgentSettings& settings, AgentStats& stats, double now) {
  const auto grant = in.envelope().getBody().getGrant();
  const auto round = grant.getRound();
  if (round > 0) {
    stats.last_grant_at[round] = std::max(stats.last_grant_at[round], now);
    ++stats.grants_in[round];
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
  if (settings.launch_jobs) launch_on_idle_gpus(a, stats, now);
  net::OutMessage status(a.next_request++);
  auto msg = status.body().initAppStatus();
  msg.setApp(a.app);
  const int usable = static_cast<int>(a.held.size()) / a.gpus_per_job * a.gpus_per_job;
  msg.setRho(a.rho(usable, Locality::kSameMachine, now));
  msg.setDemand(static_cast<std::uint32_t>(std::max(0, a.demand() - static_cast<int>(a.held.size()))));
  msg.setBestLoss(std::nan(""));
  msg.setSummary(std::to_string(a.held.size()) + " GPUs");
  a.send(status);
}

}  // namespace

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double Agent::rho(int gpus, Locality placement, double now) const {
  const double t_id = work / demand();
  if (gpus <= 0) return (now - submitted_at + work / gpus_per_job) / t_id;
  return (now - submitted_at + work * slowdown(placement) / gpus) / t_id;
}

void Agent::send(net::OutMessage& message) {
  auto frame = message.to_frame();
  socket->send(frame, zmq::send_flags::dontwait);
}

void draw_app(Agent& agent, Rng& rng) {
  const int gang[] = {1, 2, 4, 8};
  agent.gpus_per_job = gang[rng.below(4)];
  agent.jobs = 1 + static_cast<int>(rng.below(4));
  agent.work = 3600.0 * static_cast<double>(1 + rng.below(48));
  agent.job_state.resize(static_cast<std::size_t>(agent.jobs));
}

void submit_apps(zmq::context_t& context, const std::string& endpoint, std::vector<Agent>& agents) {
  zmq::socket_t client(context, zmq::socket_type::dealer);
  client.set(zmq::sockopt::linger, 0);
  client.connect(endpoint);
  for (std::size_t i = 0; i < agents.size(); ++i) {
    Agent& a = agents[i];
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

void attach_agents(zmq::context_t& context, const std::string& endpoint, std::vector<Agent>& agents) {
  for (auto& a : agents) {
    a.socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::dealer);
    a.socket->set(zmq::sockopt::linger, 0);
    a.socket->connect(endpoint);
    net::OutMessage out(a.next_request++);
    out.body().initAttach().setApp(a.app);
    a.send(out);
  }
}

void handle_agent_message(Agent& a, const net::InMessage& in, const AgentSettings& settings, AgentStats& stats) {
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
    case W::OFFER: on_offer(a, in, settings, stats, now); break;
    case W::GRANT: on_grant(a, in, settings, stats, now); break;
    case W::ERROR: {
      if (const auto it = a.launch_requests.find(in.request_id()); it != a.launch_requests.end()) {
        a.job_state[static_cast<std::size_t>(it->second.job)].gpus.clear();
        ++stats.refused;
        ++stats.refusals[refusal_cause(it->second, body.getError().getCode(), body.getError().getMessage().cStr(), now)];
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
}

void serve_agents(std::vector<Agent>& agents, std::chrono::milliseconds timeout, const AgentSettings& settings,
                  AgentStats& stats) {
  std::vector<zmq::pollitem_t> items;
  items.reserve(agents.size());
  for (auto& a : agents) items.push_back({a.socket->handle(), 0, ZMQ_POLLIN, 0});
  zmq::poll(items.data(), items.size(), timeout);
  for (std::size_t i = 0; i < agents.size(); ++i) {
    if (!(items[i].revents & ZMQ_POLLIN)) continue;
    for (int k = 0; k < 100; ++k) {
      zmq::message_t frame;
      if (!agents[i].socket->recv(frame, zmq::recv_flags::dontwait)) break;
      wire::ErrorCode code{};
      std::string error;
      auto in = net::InMessage::parse(frame, &code, &error);
      if (in) handle_agent_message(agents[i], *in, settings, stats);
    }
  }
}

}  // namespace themis::bench
