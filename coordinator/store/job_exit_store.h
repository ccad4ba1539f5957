#pragma once
// The jobs-table bookkeeping of ranks exiting and jobs stopping (docs/protocols/control.md "Exited"): the
// current attempt and state a report is checked against, exited ranks and their exit status and log tail,
// and the hold (retry_at) on a job whose ranks may still run on a lost host.
#include <cstdint>
#include <optional>
#include <string>

#include "coordinator/store/database.h"

namespace themis::store {

class JobExitStore {
 public:
  explicit JobExitStore(Database& db) : db_(db) {}

  struct Attempt {
    std::string state;
    std::int64_t attempt = 0;
  };
  // The job's state and current attempt (nullopt: no such job).
  std::optional<Attempt> current_attempt(std::int64_t app, std::int64_t job);
  // The job's current attempt (0: no such job).
  std::int64_t attempt(std::int64_t app, std::int64_t job);
  // Whether that attempt of the job is still STOPPING.
  bool is_stopping(std::int64_t app, std::int64_t job, std::int64_t attempt);
  // Why the job is in its state (nullopt: no such job).
  std::optional<std::string> reason(std::int64_t app, std::int64_t job);

  // What a rank's exit is counted against: the job's state, attempt and reason, the ranks that exited before
  // it and how many ranks its placement has.
  struct ExitTally {
    std::string state;
    std::int64_t attempt = 0;
    std::string reason;
    std::int64_t exited_ranks = 0;
    std::int64_t world = 0;
  };
  std::optional<ExitTally> exit_tally(std::int64_t app, std::int64_t job);
  // One more rank exited (`exited_ranks` in all): the first exit code and signal are kept; the log tail is
  // kept when the rank succeeded, else replaced.
  void record_rank_exit(std::int64_t app, std::int64_t job, std::int64_t exited_ranks, std::int64_t exit_code,
                        std::int64_t signal, bool success, const std::string& log_tail);
  // A failed rank's exit status and log tail replace the job's.
  void set_failed_exit(std::int64_t app, std::int64_t job, std::int64_t exit_code, std::int64_t signal,
                       const std::string& log_tail);

  // What a stop needs: the job's attempt and state and its app's grace period (nullopt: no such job).
  struct StopTarget {
    std::int64_t attempt = 0;
    std::string state;
    std::int64_t grace_ms = 0;
  };
  std::optional<StopTarget> stop_target(std::int64_t app, std::int64_t job);
  // The job's state, reason and attempt (empty and 0: no such job).
  struct StopState {
    std::string state, reason;
    std::int64_t attempt = 0;
  };
  StopState stop_state(std::int64_t app, std::int64_t job);
  // A PENDING job is not placed before `until` (an earlier hold is kept if later).
  void hold_retry_until(std::int64_t app, std::int64_t job, double until);

 private:
  Database& db_;
};

}  // namespace themis::store
