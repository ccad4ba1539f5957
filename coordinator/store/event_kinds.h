#pragma once
// Every kind of row in the events table, in one table (docs/admin.md "Events"). Names are CamelCase: an
// app's own transitions start with App, a job's end is its state as a word (Completed, Failed, Cancelled;
// Requeued when it goes back to PENDING). Schema 8 renamed the rows older coordinators wrote.
#include <string>
#include <string_view>
#include <vector>

namespace themis::store {

struct EventKind {
  std::string_view name;
  std::string_view meaning;
};

const std::vector<EventKind>& event_kinds();
bool is_event_kind(std::string_view name);

// A job's end event for the state it ends in (PENDING: Requeued); an app's for its final state.
// Throws std::invalid_argument for a state that is not an end.
std::string job_end_event(std::string_view job_state);
std::string app_end_event(std::string_view app_state);

// Names older coordinators wrote, and what they are now.
struct RenamedEventKind {
  std::string_view old_name, name;
};
const std::vector<RenamedEventKind>& renamed_event_kinds();

}  // namespace themis::store
