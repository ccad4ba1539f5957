#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <thread>

namespace themis::testing {

namespace {
pid_t spawn(const std::vector<std::string>& argv, int out_fd, const std::map<std::string, std::string>& env) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, 1);
    ::dup2(out_fd, 2);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}
}  // namespace

Process::Process(const std::vector<std::string>& argv, const std::string& log_path,
                 const std::map<std::string, std::string>& env) {
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_ = spawn(argv, fd, env);
  ::close(fd);
}

Process::~Process() {
  if (pid_ > 0 && status_ < 0) kill_and_wait(SIGKILL);
}

Process::Process(Process&& other) noexcept : pid_(other.pid_), status_(other.status_) { other.pid_ = -1; }

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0 && status_ < 0) kill_and_wait(SIGKILL);
    pid_ = other.pid_;
    status_ = other.status_;
    other.pid_ = -1;
  }
  return *this;
}

bool Process::running() {
  if (pid_ <= 0 || status_ >= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    status_ = status;
    return false;
  }
  return true;
}

void Process::signal(int sig) {
  if (pid_ > 0 && status_ < 0) ::kill(pid_, sig);
}

int Process::wait() {
  if (pid_ <= 0) return -1;
  if (status_ < 0) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    status_ = status;
  }
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
}

void Process::kill_and_wait(int sig) {
  signal(sig);
  wait();
}

Output run_command(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  int fds[2];
  if (::pipe(fds) != 0) return {-1, "pipe failed"};
  const pid_t pid = spawn(argv, fds[1], env);
  ::close(fds[1]);
  Output output;
  std::array<char, 4096> buffer{};
  ssize_t n;
  while ((n = ::read(fds[0], buffer.data(), buffer.size())) > 0) output.out.append(buffer.data(), static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  output.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return output;
}

}  // namespace themis::testing
