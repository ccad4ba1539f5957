#include "coordinator/lifecycle.h"

#include <algorithm>
#include <array>
#include <utility>

namespace themis::coordinator {
namespace {

constexpr std::array<std::pair<JobState, std::string_view>, 7> kJobNames{{
    {JobState::kPending, "PENDING"},
    {JobState::kStarting, "STARTING"},
    {JobState::kRunning, "RUNNING"},
    {JobState::kStopping, "STOPPING"},
    {JobState::kCompleted, "COMPLETED"},
    {JobState::kFailed, "FAILED"},
    {JobState::kCancelled, "CANCELLED"},
}};
constexpr std::array<std::pair<AppState, std::string_view>, 5> kAppNames{{
    {AppState::kPending, "PENDING"},
    {AppState::kRunning, "RUNNING"},
    {AppState::kCompleted, "COMPLETED"},
    {AppState::kFailed, "FAILED"},
    {AppState::kCancelled, "CANCELLED"},
}};

template <typename State, std::size_t N>
std::string_view name_of(const std::array<std::pair<State, std::string_view>, N>& names, State state) {
  for (const auto& [s, name] : names) {
    if (s == state) return name;
  }
  return "?";
}

template <typename State, std::size_t N>
std::optional<State> state_of(const std::array<std::pair<State, std::string_view>, N>& names, std::string_view name) {
  for (const auto& [s, n] : names) {
    if (n == name) return s;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(JobState state) { return name_of(kJobNames, state); }
std::string_view to_string(AppState state) { return name_of(kAppNames, state); }
std::optional<JobState> job_state_named(std::string_view name) { return state_of(kJobNames, name); }
std::optional<AppState> app_state_named(std::string_view name) { return state_of(kAppNames, name); }

bool is_active(JobState state) {
  return state == JobState::kStarting || state == JobState::kRunning || state == JobState::kStopping;
}
bool is_final(JobState state) {
  return state == JobState::kCompleted || state == JobState::kFailed || state == JobState::kCancelled;
}
bool is_final(AppState state) {
  return state == AppState::kCompleted || state == AppState::kFailed || state == AppState::kCancelled;
}

JobState end_of_stop(std::string_view stop_reason) {
  if (stop_reason == "Cancelled") return JobState::kCancelled;
  if (stop_reason == "RankFailed") return JobState::kFailed;
  return JobState::kPending;
}

const std::vector<JobState>& sources(JobEvent event) {
  using enum JobState;
  static const std::vector<JobState> pending{kPending};
  static const std::vector<JobState> starting{kStarting};
  static const std::vector<JobState> launched{kStarting, kRunning};
  static const std::vector<JobState> active{kStarting, kRunning, kStopping};
  static const std::vector<JobState> may_fail{kPending, kStarting, kRunning};
  static const std::vector<JobState> droppable{kPending, kCompleted};
  static const std::vector<JobState> ended_by_launcher{kCompleted, kFailed};
  switch (event) {
    case JobEvent::kStarted: return pending;
    case JobEvent::kRelaunched: return ended_by_launcher;
    case JobEvent::kWorkersUp: return starting;
    case JobEvent::kStopSent: return launched;
    case JobEvent::kStopped: return active;
    case JobEvent::kSucceeded: return launched;
    case JobEvent::kRetried: return launched;
    case JobEvent::kFailed: return may_fail;
    case JobEvent::kCancelled: return pending;
    case JobEvent::kDropped: return droppable;
  }
  return pending;
}

JobState target(JobEvent event, std::string_view stop_reason) {
  switch (event) {
    case JobEvent::kStarted: return JobState::kStarting;
    case JobEvent::kRelaunched: return JobState::kStarting;
    case JobEvent::kWorkersUp: return JobState::kRunning;
    case JobEvent::kStopSent: return JobState::kStopping;
    case JobEvent::kStopped: return end_of_stop(stop_reason);
    case JobEvent::kSucceeded: return JobState::kCompleted;
    case JobEvent::kRetried: return JobState::kPending;
    case JobEvent::kFailed: return JobState::kFailed;
    case JobEvent::kCancelled: return JobState::kCancelled;
    case JobEvent::kDropped: return JobState::kCompleted;
  }
  return JobState::kPending;
}

std::optional<JobState> next_state(JobState from, JobEvent event, std::string_view stop_reason) {
  const auto& from_states = sources(event);
  if (std::find(from_states.begin(), from_states.end(), from) == from_states.end()) return std::nullopt;
  return target(event, stop_reason);
}

bool releases_placement(JobEvent event) { return event == JobEvent::kStopped || event == JobEvent::kRetried; }

AppState app_state_from_jobs(const JobCounts& jobs) {
  if (jobs.completed + jobs.failed + jobs.cancelled < jobs.total) {
    return jobs.active > 0 ? AppState::kRunning : AppState::kPending;
  }
  if (jobs.cancelled > 0) return AppState::kCancelled;
  if (jobs.failed > 0) return AppState::kFailed;
  return AppState::kCompleted;
}

bool app_may_move(AppState from, AppState /*to*/) { return !is_final(from); }

}  // namespace themis::coordinator
