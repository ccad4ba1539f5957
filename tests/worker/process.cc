#include "process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace themis::worker::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "themis-worker-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Rank spawn_train(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                 const std::filesystem::path& log_prefix) {
  Rank rank;
  rank.stdout_path = log_prefix.string() + ".out";
  rank.stderr_path = log_prefix.string() + ".err";
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name.starts_with("THEMIS_") || name == "RANK" || name == "WORLD_SIZE" || name == "MASTER_ADDR" ||
        name == "MASTER_PORT" || name == "GLOO_SOCKET_IFNAME") {
      continue;
    }
    env_strings.push_back(entry);
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<std::string> argv_strings{THEMIS_TRAIN_BINARY};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv, envp;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out = ::open(rank.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(rank.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0) ::_exit(126);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  rank.pid = pid;
  return rank;
}

Exit wait_for(const Rank& rank, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(rank.pid, &status, WNOHANG);
    if (r == rank.pid) {
      Exit e;
      e.exited = WIFEXITED(status);
      e.code = e.exited ? WEXITSTATUS(status) : -1;
      e.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      return e;
    }
    if (std::chrono::steady_clock::now() >= deadline) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void kill_rank(const Rank& rank, int signal) { ::kill(rank.pid, signal); }

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<Report> read_reports(const std::filesystem::path& stdout_path) {
  std::vector<Report> reports;
  std::istringstream in(read_text(stdout_path));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) reports.push_back(parse_report_line(line));
  }
  return reports;
}

std::int64_t last_iteration(const std::filesystem::path& stdout_path) {
  const std::string text = read_text(stdout_path);
  const auto pos = text.rfind("\"iter\":");
  if (pos == std::string::npos) return 0;
  return std::stoll(text.substr(pos + 7));
}

bool wait_for_iteration(const Rank& rank, std::int64_t target, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (last_iteration(rank.stdout_path) >= target) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

std::optional<EventRecord> find_event(const std::filesystem::path& stdout_path, const std::string& name) {
  for (const auto& r : read_reports(stdout_path)) {
    if (r.event && r.event->event == name) return r.event;
  }
  return std::nullopt;
}

int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::vector<Rank> launch(const JobAttempt& attempt, const std::filesystem::path& log_dir, const std::string& name) {
  std::vector<int> order = attempt.start_order;
  if (order.empty()) {
    for (int r = 0; r < attempt.world_size; ++r) order.push_back(r);
  }
  std::vector<Rank> ranks(static_cast<std::size_t>(attempt.world_size));
  for (const int r : order) {
    auto env = attempt.env;
    env["THEMIS_RANK"] = std::to_string(r);
    env["THEMIS_WORLD_SIZE"] = std::to_string(attempt.world_size);
    env["THEMIS_RENDEZVOUS"] = attempt.rendezvous;
    env["THEMIS_JOB_ID"] = name;
    if (!attempt.checkpoint_dir.empty()) env["THEMIS_CHECKPOINT_DIR"] = attempt.checkpoint_dir;
    ranks[static_cast<std::size_t>(r)] = spawn_train(attempt.args, env, log_dir / (name + "-rank" + std::to_string(r)));
  }
  return ranks;
}

std::vector<Exit> wait_all(const std::vector<Rank>& ranks, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<Exit> exits;
  for (const auto& r : ranks) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    Exit e = wait_for(r, std::max(left, std::chrono::milliseconds(1)));
    if (!e.exited && e.signal == 0) {  // still running: do not leave it behind
      kill_rank(r, SIGKILL);
      wait_for(r, std::chrono::seconds(5));
    }
    exits.push_back(e);
  }
  return exits;
}

}  // namespace themis::worker::testing
