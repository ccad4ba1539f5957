#include "coordinator/store/event_kinds.h"

#include <algorithm>
#include <stdexcept>

namespace themis::store {

const std::vector<EventKind>& event_kinds() {
  static const std::vector<EventKind> kinds = {
      {"Submitted", "an app arrived"},
      {"SubmitRepeated", "a submit repeated an earlier token; answered with the same app"},
      {"Queued", "admission control holds the app"},
      {"Admitted", "admission control let the app compete for GPUs"},
      {"CancelRequested", "an owner or admin asked to cancel the app"},
      {"AppCompleted", "every job of the app ended, none failed or was cancelled"},
      {"AppFailed", "the app ended with a failed job, or its launcher said it failed"},
      {"AppCancelled", "the app ended cancelled"},
      {"LeaseGranted", "a round leased GPUs to the app"},
      {"LeaseRenewed", "a lease was renewed at expiry"},
      {"LeaseExpired", "a lease ended at its expiry"},
      {"LeaseReleased", "the app's launcher gave back a leased GPU that no job of the app used, before its expiry"},
      {"LaunchRequested", "the coordinator sent a job's ranks to their nodelets"},
      {"Running", "every rank of a job is up"},
      {"RankExited", "one rank of a job exited"},
      {"StopRequested", "the coordinator asked a job's ranks to stop"},
      {"Completed", "a job ended, every rank exited 0"},
      {"Failed", "a job ended failed"},
      {"Cancelled", "a job ended cancelled"},
      {"Requeued", "a job went back to PENDING (preempted, or to retry)"},
      {"EarlyStopped", "the app's scheduler dropped a job (successive halving)"},
      {"FailureClassified", "a failed attempt was classified and the retry policy decided"},
      {"BackoffOver", "a job's retry back-off ended"},
      {"NodeFail", "a job lost a host"},
      {"WorkersLost", "a job's workers were gone when its host reported"},
      {"ProbeStarted", "the app's first job runs alone on one GPU"},
      {"Infeasible", "the app needs more GPUs per job than the registered cluster has; it waits"},
      {"Feasible", "enough hosts registered for an Infeasible app; it is queued for admission"},
      {"ProbePassed", "the probe job trained; the app competes for GPUs"},
      {"ProbeFailed", "the probe job failed; the app failed"},
      {"LauncherStarted", "the coordinator started the app's launcher"},
      {"LauncherAttached", "a launcher attached to the app"},
      {"LauncherExited", "the app's launcher process ended"},
      {"LauncherLost", "the app's launcher could not be kept running"},
      {"LauncherStatus", "the launcher's report changed (ρ, progress, summary)"},
      {"LauncherState", "the launcher's resumable state changed"},
      {"HostJoined", "a host registered for the first time"},
      {"HostUp", "a host registered again"},
      {"HostDown", "a host missed its heartbeats"},
      {"HostStopped", "a host's nodelet shut down cleanly and said so"},
      {"HostDrained", "an admin drained a host: no new leases on it"},
      {"HostResumed", "an admin resumed a drained host"},
      {"KeysReloaded", "authorized_keys was read again"},
  };
  return kinds;
}

bool is_event_kind(std::string_view name) {
  const auto& kinds = event_kinds();
  return std::any_of(kinds.begin(), kinds.end(), [&](const EventKind& k) { return k.name == name; });
}

std::string job_end_event(std::string_view job_state) {
  if (job_state == "PENDING") return "Requeued";
  if (job_state == "COMPLETED") return "Completed";
  if (job_state == "FAILED") return "Failed";
  if (job_state == "CANCELLED") return "Cancelled";
  throw std::invalid_argument("job_end_event: '" + std::string(job_state) + "' is not a state a job ends in");
}

std::string app_end_event(std::string_view app_state) {
  if (app_state == "COMPLETED") return "AppCompleted";
  if (app_state == "FAILED") return "AppFailed";
  if (app_state == "CANCELLED") return "AppCancelled";
  throw std::invalid_argument("app_end_event: '" + std::string(app_state) + "' is not a state an app ends in");
}

const std::vector<RenamedEventKind>& renamed_event_kinds() {
  static const std::vector<RenamedEventKind> renamed = {
      {"AppCOMPLETED", "AppCompleted"}, {"AppFAILED", "AppFailed"}, {"AppCANCELLED", "AppCancelled"},
      {"COMPLETED", "Completed"},       {"FAILED", "Failed"},       {"CANCELLED", "Cancelled"},
  };
  return renamed;
}

}  // namespace themis::store
