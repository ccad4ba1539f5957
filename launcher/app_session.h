#pragma once
// One app's launcher session without sockets: the Agent plus what the wire needs around it. The
// daemon (launcher/daemon.h) feeds it what the coordinator and the workers say and sends what it returns.
//
// Worker reports (worker/report_format.h) name their job "<app>_<job>@<attempt>": the launcher sets
// THEMIS_JOB_ID so, and a report of an older attempt can never be taken for the current one.
// An attempt ends when every rank has exited (the coordinator relays each rank's exit). Its outcome:
// rank 0's "exit" event status when it arrived ("completed", "preempted"; anything else is a failure),
// else the exit codes: all 0 is "completed", or "preempted" if the launcher had asked it to stop.
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/agent.h"

namespace themis::launcher {

struct JobLaunch {
  int job = 0;
  int attempt = 0;
  std::vector<GpuIndex> gpus;                  // rank r on gpus[r]
  std::map<std::string, std::string> env;      // THEMIS_HPARAMS, THEMIS_JOB_ID, THEMIS_REPORT_ENDPOINT
};

struct AppStatus {
  double rho = 0;
  double progress = 0;          // 0..1: iterations done over iterations the scheduler will run
  bool finished = false;
  bool failed = false;
  std::optional<double> best_loss;
  int demand = 0;               // more GPUs it could use now (whole gangs of runnable jobs)
  std::string summary;          // one line, e.g. "phase 2/3, 2 running, 1 waiting, 1 stopped early"
  std::uint64_t iterations_done = 0;     // Σ over jobs of iterations trained, each up to its phase target
  std::uint64_t iterations_planned = 0;  // Σ_i J_i · I_i: iterations the scheduler runs in all
  std::string phase;            // "train", "halving 2/3" (successive halving), "done"
  std::vector<GpuIndex> release;  // held GPUs it gives back now (Agent::idle_gpus)
  // S per locality level (same slot, same machine, same rack, cross rack): its slowdown model, priors replaced
  // by what its jobs showed (bidder/slowdown.h). The coordinator scores leftover sets and machine holds by it.
  std::array<double, kLocalityLevels> slowdowns{};
  Seconds remaining = 0;        // seconds it still needs on its fair share (Agent::remaining_at_fair_share); 0 when done
};

class AppSession {
 public:
  // `hparams[j]`: job j's hyper-parameters as the spec wrote them.
  // `report_env`: added to every launch's environment so that its ranks report to this launcher
  // (THEMIS_REPORT_ENDPOINT and, in CURVE mode, the keys of ReportSecurity::worker_env); empty: none.
  AppSession(const Cluster& cluster, const AgentConfig& config, std::vector<std::map<std::string, std::string>> hparams,
             std::map<std::string, std::string> report_env, Seconds start, int active_apps);

  Bid on_offer(const Offer& offer, int active_apps, Seconds now);
  // The coordinator's answer to a status: the apps active now and the contention forecast over the rest of the
  // app's life (AppStatusAck; Agent::set_contention_ahead).
  void on_contention(int active_apps, double ahead, Seconds now);
  // `probe`: the grant is the app's first-iteration probe (Agent::set_held_gpus).
  void on_leases(std::vector<GpuIndex> held, Seconds now, bool probe = false);
  // The same with each lease's expiry (on the clock of `now`): no job goes onto a lease about to end
  // (Agent::take_launches).
  void on_held_leases(const std::vector<HeldLease>& leases, Seconds now, bool probe = false);
  // `stop_ordered`: the coordinator had ordered the attempt to stop, so a clean exit is a preemption even when
  // rank 0's own exit status has not been read yet (this launcher was not listening when the stop came).
  void on_rank_exit(int job, int attempt, int rank, int exit_code, int signal, bool stop_ordered, Seconds now);
  // One report line; malformed lines and reports of other apps are counted and dropped.
  void on_report_line(std::string_view line, Seconds now);

  void restore_attempt(int job, int attempt) { agent_.restore_attempt(job, attempt); }
  // What a restarted launcher of the app resumes from (AppStatus.state, a JSON object): the scheduler's
  // phase, each job's status, and for jobs that reached their phase target their iterations and loss,
  // failure counts, and the probe's time once known (Agent::probe_time). It changes when a job's attempt ends and
  // when the probe's first iteration arrives, not with every iteration.
  std::string saved_state() const;
  // Throws std::invalid_argument when `state` is not a saved state of this app.
  void restore_state(const std::string& state);
  void on_launch_refused(int job, int attempt, const std::string& why);
  // Jobs successive halving dropped since the last call (the coordinator marks them done, never run).
  std::vector<int> take_stopped_early();

  // Launches onto leases with launch_margin() left at `now` (the default: every lease counts as long enough).
  std::vector<JobLaunch> take_launches(Seconds now = -std::numeric_limits<double>::infinity());
  std::vector<StopCommand> take_stops();
  // The launch take_launches returned for `attempt` of `job`, while that attempt has not ended: a coordinator
  // that restarted before sending it to its hosts needs it again (its environment is kept in memory only).
  std::optional<JobLaunch> launch_of(int job, int attempt) const;
  AppStatus status(Seconds now) const;
  // A status carrying `release` went to the coordinator: those GPUs are given back (Agent::give_back).
  void on_released(const std::vector<GpuIndex>& gpus) { agent_.give_back(gpus); }
  // Lines worth a log entry since the last call (starts, resumes, exits, phase ends).
  std::vector<std::string> take_notes();

  const Agent& agent() const { return agent_; }
  std::string job_name(int job, int attempt) const;
  int dropped_reports() const { return dropped_reports_; }

 private:
  struct Attempt {
    int world_size = 0;
    int ranks_exited = 0;
    bool all_zero = true;
    // Every rank exited 0 or died of SIGTERM, the signal an ordered stop sends: a rank still loading
    // (before its checkpoint handler is installed) dies of it. SIGKILL, the stop's escalation when a rank
    // outlives its grace period, is not counted: that rank did not stop when asked.
    bool only_stop_signal = true;
    bool stop_requested = false;
    std::optional<std::string> rank0_status;
    std::int64_t last_iteration = 0;
    JobLaunch launch;  // as take_launches returned it
  };
  void finish_attempt(int job, int attempt, Seconds now);

  AgentConfig config_;
  Agent agent_;
  std::vector<std::map<std::string, std::string>> hparams_;
  std::map<std::string, std::string> report_env_;
  std::map<std::pair<int, int>, Attempt> attempts_;  // (job, attempt)
  int dropped_reports_ = 0;
  std::vector<bool> stopped_early_told_;
  std::vector<std::string> notes_;
};

// "42_3@2" -> {42, 3, 2}; nullopt for anything else.
struct JobName {
  AppId app = 0;
  int job = 0;
  int attempt = 0;
};
std::optional<JobName> parse_job_name(std::string_view name);

}  // namespace themis::launcher
