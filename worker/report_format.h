#pragma once
// The worker -> launcher report format, in one place. One JSON object per line (a ZeroMQ message may
// carry several lines). Two kinds:
//   iteration: {"job":"42_3","rank":0,"iter":17,"sec":0.0123,"loss":0.6931}
//   event:     {"job":"42_3","rank":0,"iter":17,"event":"exit","status":"preempted",...string fields}
// "iter" counts completed iterations; "sec" is the wall time of that iteration on that rank.
// Events: "start" (fields: world_size, resumed_from), "checkpoint" (path), "exit" (status, digest).
// Exit statuses: "completed", "preempted", "preempted-unsaved", "communication-failure", "error".
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace themis::worker {

struct IterationRecord {
  std::int64_t iteration = 0;
  double seconds = 0;
  double loss = 0;
};

struct EventRecord {
  std::string event;
  std::int64_t iteration = 0;
  std::map<std::string, std::string> fields;
};

// One decoded line.
struct Report {
  std::string job;
  int rank = 0;
  std::optional<IterationRecord> iteration;  // set for an iteration record
  std::optional<EventRecord> event;          // set for an event
};

// Appends one line (with '\n') to out. Cheap: no allocation beyond out's growth.
void append_iteration_line(std::string& out, std::string_view job, int rank, const IterationRecord& record);
void append_event_line(std::string& out, std::string_view job, int rank, const EventRecord& event);

// Parses one line; throws std::invalid_argument("report line: <what is wrong>").
Report parse_report_line(std::string_view line);

}  // namespace themis::worker
