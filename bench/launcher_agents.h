#pragma once
// App agents held by a benchmark process: the launcher's side of the protocol (docs/launcher.md), one
// ZeroMQ DEALER each. An agent attaches, answers every offer with a bid from the bidder library
// (bidder/bid_generator.h), reports ρ and demand, and (unless told not to) launches its jobs on the GPUs
// it is granted. As themis-launch does, it names the leases a launch acts on, puts no job on a lease about
// to end (launcher/agent.h, launch_margin), and relaunches a job only once its last attempt's ranks all
// exited. The apps are foreground launcher apps (the coordinator never places their jobs) and run no probe.
// Launches the coordinator refused are counted by cause (docs/protocols/control.md "Stale grants").
// Used by control_plane_bench and loop_lag_bench.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "bidder/bid_generator.h"
#include "core/ids.h"
#include "core/rng.h"
#include "core/topology.h"
#include "net/envelope.h"

namespace themis::bench {

double unix_now();

// One app's agent, with a synthetic ρ model ρ = (elapsed + work·S(placement)/GPUs) / (work / demand), as
// in bench/auction_bench.cc (S = 1.0 / 1.1 / 1.3 for machine / rack / cross rack).
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
  double rho(int gpus, Locality placement, double now) const;
  void send(net::OutMessage& message);
};

// A random app shape: a job of 1, 2, 4 or 8 GPUs, 1–4 jobs, 1–48 GPU-hours of work.
void draw_app(Agent& agent, Rng& rng);

struct AgentSettings {
  bidder::BidSettings bids{32, 8, true};
  bool launch_jobs = true;  // false: the agents bid and report but never launch (no work for the nodelets)
};

// What the agents saw, over all of them.
struct AgentStats {
  long offers = 0, bid_rows = 0, launches = 0, refused = 0;
  std::map<std::string, long> refusals;          // cause -> count
  std::map<std::int64_t, double> last_grant_at;  // round -> the last agent's receive time (unix_now)
  std::map<std::int64_t, int> grants_in;         // round -> agents that received its grant
};

// Submits one foreground launcher app per agent through `endpoint` (the Submit message themisctl sends) and
// sets each agent's app id and submitted_at; throws when the coordinator refuses or does not answer in 30 s.
void submit_apps(zmq::context_t& context, const std::string& endpoint, std::vector<Agent>& agents);

// Connects each agent's DEALER to `endpoint` and sends its attach.
void attach_agents(zmq::context_t& context, const std::string& endpoint, std::vector<Agent>& agents);

// Handles one message the coordinator sent to `agent`.
void handle_agent_message(Agent& agent, const net::InMessage& in, const AgentSettings& settings, AgentStats& stats);

// Polls every agent's socket for up to `timeout` and handles what arrived.
void serve_agents(std::vector<Agent>& agents, std::chrono::milliseconds timeout, const AgentSettings& settings,
                  AgentStats& stats);

}  // namespace themis::bench
