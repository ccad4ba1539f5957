#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <thread>

namespace themis::testing {

namespace {
pid_t spawn(const std::vector<std::string>& argv, int out_fd, const std::map<std::string, std::string>& env,
            int err_fd = -1) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, 1);
    ::dup2(err_fd < 0 ? out_fd : err_fd, 2);
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
  int out[2], err[2];
  if (::pipe(out) != 0) return {-1, "pipe failed", ""};
  if (::pipe(err) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return {-1, "pipe failed", ""};
  }
  const pid_t pid = spawn(argv, out[1], env, err[1]);
  ::close(out[1]);
  ::close(err[1]);
  Output output;
  std::array<char, 4096> buffer{};
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (auto& f : fds) {
      if (f.fd < 0 || !(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(f.fd, buffer.data(), buffer.size());
      if (n <= 0) {
        ::close(f.fd);
        f.fd = -1;
        --open_fds;
        continue;
      }
      output.out.append(buffer.data(), static_cast<std::size_t>(n));
      if (f.fd == out[0]) output.stdout_text.append(buffer.data(), static_cast<std::size_t>(n));
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  output.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return output;
}

}  // namespace themis::testing
