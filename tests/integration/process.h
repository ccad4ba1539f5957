#pragma once
// A child process for tests: argv, an environment overlay, stdout+stderr to a log file.
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace themis::testing {

class Process {
 public:
  Process() = default;
  Process(const std::vector<std::string>& argv, const std::string& log_path,
          const std::map<std::string, std::string>& env = {});
  ~Process();
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;

  pid_t pid() const { return pid_; }
  bool running();
  void signal(int sig);
  // Waits for exit; returns the exit code, or 128 + signal.
  int wait();
  void kill_and_wait(int sig);

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

struct Output {
  int code = 0;
  std::string out;          // stdout and stderr, in the order they arrived
  std::string stdout_text;  // stdout alone: what a script parses (themisctl's notices go to stderr)
  // The first line of stdout, e.g. the app id of `themisctl submit --parsable`.
  std::string first_stdout_line() const { return stdout_text.substr(0, stdout_text.find_first_of("\r\n")); }
};

// Runs to completion (up to 30 s).
Output run_command(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

}  // namespace themis::testing
