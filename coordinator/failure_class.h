#pragma once
// Why a job's attempt ended without success, from what the coordinator observed: the exit status and log
// tail a nodelet reported, or a node that stopped answering, or a stop the scheduler itself ordered.
// Pure: no clocks, files or sockets (docs/reliability.md lists the signatures and their order).
#include <optional>
#include <string>
#include <string_view>

namespace themis::coordinator {

enum class FailureClass {
  kUserError,      // the program or its configuration is wrong: retrying repeats it
  kOutOfMemory,    // host or GPU memory exhausted
  kCommunication,  // Gloo/NCCL error, a dead peer, a collective or rendezvous timeout
  kNodeFailure,    // the host stopped answering or lost the job's workers
  kPreemption,     // the scheduler stopped it (lease not renewed, launcher's stop)
  kOther,          // no signature matched and the job had made progress
};

inline constexpr FailureClass kAllFailureClasses[] = {FailureClass::kUserError,   FailureClass::kOutOfMemory,
                                                      FailureClass::kCommunication, FailureClass::kNodeFailure,
                                                      FailureClass::kPreemption,  FailureClass::kOther};

// "user_error", "out_of_memory", "communication", "node_failure", "preemption", "other": the names used
// in the database, the config ([retry.<name>]) and themisctl.
std::string_view to_string(FailureClass c);
std::optional<FailureClass> failure_class_from_string(std::string_view name);
// The job reason shown for a job that failed for good: UserError, OutOfMemory, CommFailure, NodeFail,
// Preempted, Failed.
std::string_view reason_code(FailureClass c);

// One rank's end as the nodelet reported it.
struct ExitObservation {
  int exit_code = 0;            // -1 when killed by a signal
  int signal = 0;               // 0 when it exited normally
  std::string_view log_tail;    // last lines of the rank's log
  double seconds_running = 0;   // since the attempt was placed
  bool stopped_by_scheduler = false;  // the exit followed a Stop the coordinator sent for preemption
};

struct Classification {
  FailureClass failure_class = FailureClass::kOther;
  std::string reason;  // one line: what was seen, e.g. "exit 75: ... Connection closed by peer"
};

// An attempt whose exception or unrecognised failure comes this soon, with no iteration record in its
// log tail, failed before its first iteration: a user error.
inline constexpr double kFirstIterationWindowSeconds = 600;

Classification classify_exit(const ExitObservation& exit);
// A host that missed its heartbeats, or reports no worker of a job it should be running.
Classification classify_node_loss(std::string_view what);

// When several ranks of one gang fail, the most specific cause wins: an out-of-memory rank makes its
// peers report a communication failure, not the other way round. True when `candidate` explains the
// failure better than `current`.
bool more_specific(FailureClass candidate, FailureClass current);

}  // namespace themis::coordinator
