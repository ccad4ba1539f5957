#pragma once
// Test helpers: themis-train ranks as real child processes, with stdout/stderr captured to files.
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "worker/report_format.h"

namespace themis::worker::testing {

struct Rank {
  pid_t pid = -1;
  std::filesystem::path stdout_path;
  std::filesystem::path stderr_path;
};

struct Exit {
  bool exited = false;  // false: killed by a signal (or still running at the deadline)
  int code = -1;
  int signal = 0;
};

// A fresh directory, removed on destruction.
class TempDir {
 public:
  TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Starts themis-train with `args`, this process's environment minus any rank variables, plus `env`.
Rank spawn_train(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                 const std::filesystem::path& log_prefix);

// Waits until the process exits or `timeout` passes (then the result has exited == false, signal == 0).
Exit wait_for(const Rank& rank, std::chrono::milliseconds timeout);
void kill_rank(const Rank& rank, int signal);

std::string read_text(const std::filesystem::path& path);
// The reports in a rank's stdout (JSON lines); lines that do not parse are an error.
std::vector<Report> read_reports(const std::filesystem::path& stdout_path);
// The last completed iteration reported in a rank's stdout so far (0 if none).
std::int64_t last_iteration(const std::filesystem::path& stdout_path);
// Polls a rank's stdout until it reports iteration >= target; false on timeout.
bool wait_for_iteration(const Rank& rank, std::int64_t target, std::chrono::milliseconds timeout);
// The "exit" and "start" events of a finished rank.
std::optional<EventRecord> find_event(const std::filesystem::path& stdout_path, const std::string& name);

int free_tcp_port();

// One attempt of a job: world_size ranks started together (in `start_order`, when given).
struct JobAttempt {
  int world_size = 2;
  std::vector<std::string> args;
  std::string rendezvous;      // tcp://... or file://...
  std::string checkpoint_dir;  // empty: none
  std::map<std::string, std::string> env;
  std::vector<int> start_order;
};
std::vector<Rank> launch(const JobAttempt& attempt, const std::filesystem::path& log_dir, const std::string& name);
std::vector<Exit> wait_all(const std::vector<Rank>& ranks, std::chrono::milliseconds timeout);

}  // namespace themis::worker::testing
