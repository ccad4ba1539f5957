#include "nodelet/nodelet.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <deque>
#include <filesystem>
#include <cstring>
#include <iterator>
#include <sstream>

#include "net/fencing.h"
#include "nodelet/nodelet_metrics.h"
#include "nodelet/job_log.h"
#include "net/sd_notify.h"
#include "net/socket_security.h"

namespace themis::nodelet {

namespace {
// Exit status of a job or launcher the nodelet would not start as asked (its account, its directories):
// EX_CONFIG, which the coordinator classes as a user error with the message as its reason.
constexpr int kRefusedExit = 78;

// In a freshly forked child: its own process group (so a stop reaches all it starts), stdout and stderr to
// `log_fd`, the job's account, and death with the nodelet. Exits kRefusedExit when the account cannot be
// taken on.
void detach_child(pid_t parent, int log_fd, const JobAccount& account) {
  ::setpgid(0, 0);
  if (log_fd >= 0) {
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
  }
  if (const char* failed = become(account)) {
    std::fprintf(stderr, "themis-nodelet: cannot run as %s: %s: %s\n", account.name.c_str(), failed, std::strerror(errno));
    ::_exit(kRefusedExit);
  }
  // After become(): a change of credentials clears the parent-death signal.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
}

// argv or an environment as execve takes it; the strings must outlive it. Built before fork: the child of a
// threaded process must not allocate.
std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child, last: runs `argv` with exactly `envp` (PATH searched in it), or says why not and exits 127.
[[noreturn]] void exec_or_exit(char* const* argv, char** envp) {
  environ = envp;
  ::execvp(argv[0], argv);
  std::fprintf(stderr, "themis-nodelet: cannot execute %s: %s\n", argv[0], std::strerror(errno));
  ::_exit(127);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Every rank this nodelet starts carries it, so a later run of the nodelet finds the ones it left behind.
constexpr const char* kWorkDirVariable = "THEMIS_NODELET_WORK_DIR";

std::string read_file(const std::filesystem::path& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

// Processes (any user this nodelet may signal) whose environment has `entry` ("NAME=value").
std::vector<pid_t> processes_with_environment(const std::string& entry) {
  std::vector<pid_t> found;
  std::error_code error;
  for (const auto& dir : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = dir.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == ::getpid()) continue;
    const std::string environment = read_file(dir.path() / "environ");
    std::size_t at = 0;
    while (at < environment.size()) {
      const auto end = environment.find('\0', at);
      const auto length = (end == std::string::npos ? environment.size() : end) - at;
      if (environment.compare(at, length, entry) == 0) {
        found.push_back(pid);
        break;
      }
      if (end == std::string::npos) break;
      at = end + 1;
    }
  }
  return found;
}

// The last lines of the log open at `fd` (read from its end; the file's path is in a directory the job's
// account owns and may have been changed since).
std::string log_tail(int fd, std::size_t lines = 20) {
  if (fd < 0) return {};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {};
  constexpr off_t kTailBytes = 64 * 1024;
  const off_t from = st.st_size > kTailBytes ? st.st_size - kTailBytes : 0;
  std::string text(static_cast<std::size_t>(st.st_size - from), '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), from);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (from > 0) text.erase(0, text.find('\n') == std::string::npos ? 0 : text.find('\n') + 1);  // a partial line
  std::istringstream in(text);
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    last.push_back(line.size() > 400 ? line.substr(0, 400) : line);
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += l + "\n";
  return out;
}
}  // namespace

Nodelet::Nodelet(const NodeletConfig& config)
    : config_(config),
      context_(1),
      dealer_(context_, zmq::socket_type::dealer),
      monitor_(context_, zmq::socket_type::pair),
      switch_users_(switches_users(config.insecure)) {
  if (config_.insecure) {
    if (!net::is_loopback_endpoint(config_.coordinator)) {
      throw std::invalid_argument("nodelet.insecure: refusing to connect to " + config_.coordinator + " without CURVE");
    }
    spdlog::warn("INSECURE MODE: no CURVE; the coordinator is not authenticated. Loopback only.");
  } else {
    const auto own = net::read_certificate(config_.secret_key);
    if (own.secret_key.empty()) throw std::invalid_argument(config_.secret_key + ": no secret-key in certificate");
    const auto server = net::read_certificate(config_.coordinator_key);
    net::make_curve_client(dealer_, own, server.public_key);
  }
  dealer_.set(zmq::sockopt::linger, 0);
  // Before connect, so that the first failed attempt is seen too.
  constexpr int kEvents = ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                          ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                          ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED;
  const std::string monitor_endpoint = "inproc://nodelet-monitor";
  if (zmq_socket_monitor(dealer_.handle(), monitor_endpoint.c_str(), kEvents) != 0) {
    throw std::runtime_error("cannot monitor the coordinator connection: " + std::string(zmq_strerror(zmq_errno())));
  }
  monitor_.set(zmq::sockopt::linger, 0);
  monitor_.connect(monitor_endpoint);
  dealer_.connect(config_.coordinator);
  std::filesystem::create_directories(std::filesystem::path(config_.work_dir) / "jobs");
  answered_at_ = now_s();
  nodelet_metrics::declare(metrics_);
  std::size_t gpus = 0;
  for (const auto& slot : config_.slots) gpus += slot.size();
  metrics_.set(nodelet_metrics::kGpus, static_cast<double>(gpus));
  if (switch_users_) {
    spdlog::info("jobs run as their app owner's Unix account{}", config_.allow_root_jobs ? " (root allowed)" : "");
  } else {
    spdlog::warn("jobs run as this nodelet's own user (uid {}): {}", ::geteuid(),
                 config_.insecure ? "insecure mode does not switch users" : "only a nodelet running as root can switch");
  }
}

Nodelet::~Nodelet() {
  stop_all_and_wait();
  zmq_socket_monitor(dealer_.handle(), nullptr, 0);
}

void Nodelet::send(net::OutMessage& message) {
  auto frame = message.to_frame();
  (void)dealer_.send(frame, zmq::send_flags::dontwait);
}

void Nodelet::send_register() {
  const std::uint64_t id = request_id_++;
  net::OutMessage out(id);
  auto reg = out.body().initRegister();
  reg.setHost(config_.host);
  reg.setRack(config_.rack);
  reg.setAddress(config_.address);
  reg.setNodeletVersion("0.1.0");
  auto slots = reg.initSlots(static_cast<unsigned>(config_.slots.size()));
  for (std::size_t s = 0; s < config_.slots.size(); ++s) {
    auto gpus = slots[static_cast<unsigned>(s)].initGpus(static_cast<unsigned>(config_.slots[s].size()));
    for (std::size_t g = 0; g < config_.slots[s].size(); ++g) {
      gpus[static_cast<unsigned>(g)].setLocalIndex(static_cast<std::uint32_t>(config_.slots[s][g]));
      gpus[static_cast<unsigned>(g)].setModel("declared");
    }
  }
  fill_running(reg.initRunning(static_cast<unsigned>(workers_.size())));
  fill_launchers(reg.initLaunchers(static_cast<unsigned>(launchers_.size())));
  send(out);
  metrics_.add(nodelet_metrics::kRegistrationsSent);
  next_register_ = now_s() + 1.0;
  sent_at_[id] = now_s();
}

void Nodelet::fill_running(capnp::List<wire::RunningWorker>::Builder running) const {
  unsigned i = 0;
  for (const auto& [key, worker] : workers_) {
    auto w = running[i++];
    w.setApp(std::get<0>(key));
    w.setJob(std::get<1>(key));
    w.setAttempt(std::get<2>(key));
    w.setRank(std::get<3>(key));
    w.setPid(worker.pid);
  }
}

void Nodelet::send_heartbeat() {
  const std::uint64_t id = request_id_++;
  net::OutMessage out(id);
  auto hb = out.body().initHeartbeat();
  hb.setSeq(++seq_);
  fill_running(hb.initRunning(static_cast<unsigned>(workers_.size())));
  fill_launchers(hb.initLaunchers(static_cast<unsigned>(launchers_.size())));
  send(out);
  metrics_.add(nodelet_metrics::kHeartbeatsSent);
  sent_at_[id] = now_s();
  next_heartbeat_ = now_s() + static_cast<double>(heartbeat_interval_ms_) / 1000.0;
}

void Nodelet::run() {
  stop_orphans_of_earlier_run();
  send_register();
  // READY=1 only once registered (see Registered below): until then the service is not up.
  net::sd_notify("STATUS=connecting to " + config_.coordinator);
  while (!stop_) {
    zmq::pollitem_t items[] = {{dealer_.handle(), 0, ZMQ_POLLIN, 0}, {monitor_.handle(), 0, ZMQ_POLLIN, 0}};
    auto& item = items[0];
    try {
      zmq::poll(items, 2, std::chrono::milliseconds(20));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;  // a signal: the loop condition decides
      throw;
    }
    if (items[1].revents & ZMQ_POLLIN) read_monitor_events();
    while (item.revents & ZMQ_POLLIN) {
      zmq::message_t frame;
      if (!dealer_.recv(frame, zmq::recv_flags::dontwait)) break;
      handle(frame);
    }
    reap();
    enforce_deadlines();
    const double now = now_s();
    fence_if_unheard(now);
    if (fenced_ && workers_.empty()) {
      fenced_ = false;
      spdlog::info("fenced workers are gone: registering again");
    }
    // A fenced nodelet registers only once its workers are gone: its GPUs are free when offered again.
    if (!registered_ && !fenced_ && now >= next_register_) send_register();
    if (registered_ && now >= next_heartbeat_) send_heartbeat();
    publish_metrics(now);
    if (const auto usec = net::sd_watchdog_usec(); usec > 0 && (now - last_watchdog_) * 2e6 > static_cast<double>(usec)) {
      net::sd_notify("WATCHDOG=1");
      last_watchdog_ = now;
    }
  }
  spdlog::info("nodelet stopping: stopping {} workers", workers_.size());
  announce_stop();
  stop_all_and_wait();
}

void Nodelet::publish_metrics(double now) {
  metrics_.set(nodelet_metrics::kWorkers, static_cast<double>(workers_.size()));
  metrics_.set(nodelet_metrics::kLaunchers, static_cast<double>(launchers_.size()));
  metrics_.set(nodelet_metrics::kConnected, registered_ && now - answered_at_ < down_bound_s() ? 1 : 0);
  metrics_.set(nodelet_metrics::kFenced, fenced_ ? 1 : 0);
  metrics_.set(nodelet_metrics::kAnswerAge, now - answered_at_);
}

void Nodelet::announce_stop() {
  if (!registered_) return;  // no session to end
  const std::uint64_t id = request_id_++;
  net::OutMessage out(id);
  out.body().initNodeletStopping().setReason("the nodelet was asked to stop");
  send(out);
  // Its answer, for at most a second: an unanswered stop leaves the coordinator to notice the silence.
  const double give_up = now_s() + 1.0;
  while (now_s() < give_up) {
    zmq::pollitem_t item{dealer_.handle(), 0, ZMQ_POLLIN, 0};
    try {
      zmq::poll(&item, 1, std::chrono::milliseconds(20));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      throw;
    }
    zmq::message_t frame;
    while ((item.revents & ZMQ_POLLIN) && dealer_.recv(frame, zmq::recv_flags::dontwait)) {
      wire::ErrorCode code{};
      std::string error;
      auto in = net::InMessage::parse(frame, &code, &error);
      if (in && in->request_id() == id && in->which() == wire::Envelope::Body::Which::ACK) {
        stop_announced_ = true;
        spdlog::info("the coordinator recorded this host as stopped");
        return;
      }
    }
  }
  spdlog::warn("the coordinator did not answer the stop notice within 1 s; it will find this host silent");
}

void Nodelet::read_monitor_events() {
  while (true) {
    zmq::message_t event, endpoint;
    if (!monitor_.recv(event, zmq::recv_flags::dontwait)) return;
    if (!event.more() || !monitor_.recv(endpoint, zmq::recv_flags::dontwait)) return;
    if (event.size() < 6) continue;
    std::uint16_t id = 0;
    std::uint32_t value = 0;
    std::memcpy(&id, event.data(), sizeof(id));
    std::memcpy(&value, static_cast<const char*>(event.data()) + sizeof(id), sizeof(value));
    const std::string where = endpoint.to_string();
    if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      if (connect_failures_ > 0) {
        spdlog::info("connected to the coordinator at {} after {} failed attempts", where, connect_failures_);
      }
      connect_failures_ = 0;
      next_failure_log_ = 0;
      continue;
    }
    std::string what;
    if (id == ZMQ_EVENT_CONNECT_RETRIED) what = "cannot connect (nothing answers there; retrying in " + std::to_string(value) + " ms)";
    else if (id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) what = "CURVE handshake refused (is this host's key enrolled?), ZAP status " + std::to_string(value);
    else if (id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) what = "handshake failed: protocol error " + std::to_string(value) + " (wrong cluster.coordinator_key?)";
    else if (id == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) what = "handshake failed: " + std::string(zmq_strerror(static_cast<int>(value)));
    else if (id == ZMQ_EVENT_DISCONNECTED) what = "connection lost";
    else continue;
    ++connect_failures_;
    // The first failure, then one line every 10 s: ZeroMQ retries every 100 ms.
    const double now = now_s();
    if (now < next_failure_log_) continue;
    next_failure_log_ = now + 10.0;
    spdlog::warn("coordinator at {}: {} ({} failed attempts since the last connection)", where, what, connect_failures_);
  }
}

void Nodelet::handle(const zmq::message_t& frame) {
  wire::ErrorCode code{};
  std::string error;
  auto in = net::InMessage::parse(frame, &code, &error);
  if (!in) {
    spdlog::warn("bad message from the coordinator: {}", error);
    auto out = net::make_error(0, code, error);
    send(out);
    return;
  }
  using W = wire::Envelope::Body::Which;
  try {
    const auto body = in->envelope().getBody();
    switch (in->which()) {
      case W::REGISTERED: {
        const double now = now_s();
        if (now - answered_at_ > down_bound_s()) {
          // The coordinator may have declared this host down and placed its jobs again: the Stop orders that
          // follow this answer must land before the kill deadline those jobs wait out (net/fencing.h).
          stop_cap_ = answered_at_ + net::fence_kill_s(heartbeat_interval_ms_, lives_);
        }
        note_answered(in->request_id(), now);
        // A register queued while the link was down is answered long after it was sent; the coordinator
        // heard it just now. Counting from its send time would fence the workers it is about to launch, so
        // a registration counts as heard at least D ago (it assumes the answer took less than D to return).
        answered_at_ = std::max(answered_at_, now - down_bound_s());
        next_heartbeat_ = 0;
        registered_ = true;
        lives_ = std::max<std::uint32_t>(1, body.getRegistered().getLives());
        heartbeat_interval_ms_ = body.getRegistered().getHeartbeatIntervalMs();
        spdlog::info("registered as {} (first GPU {}, heartbeat every {} ms)", config_.host,
                     body.getRegistered().getFirstGpu(), heartbeat_interval_ms_);
        if (!ready_notified_) {
          net::sd_notify("READY=1\nSTATUS=registered with " + config_.coordinator);
          ready_notified_ = true;
        }
        break;
      }
      case W::HEARTBEAT_ACK:
        note_answered(in->request_id(), now_s());
        heartbeat_interval_ms_ = body.getHeartbeatAck().getNextIntervalMs();
        lives_ = std::max<std::uint32_t>(1, body.getHeartbeatAck().getLives());
        break;
      case W::LAUNCH: launch(body.getLaunch()); break;
      case W::STOP: {
        const auto s = body.getStop();
        stop(s.getApp(), s.getJob(), s.getAttempt(), s.getGraceMs());
        break;
      }
      case W::START_LAUNCHER: start_launcher(body.getStartLauncher()); break;
      case W::READ_LOG: {
        // themisctl logs, relayed by the coordinator (which checked who may read it).
        const auto r = body.getReadLog();
        const LogSlice slice = read_job_log(config_.work_dir, r.getApp(), r.getJob(), r.getAttempt(), r.getRank(), r.getOffset(),
                                            r.getMaxBytes());
        net::OutMessage out(in->request_id());
        auto chunk = out.body().initLogChunk();
        chunk.setData(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(slice.data.data()), slice.data.size()));
        chunk.setOffset(slice.offset);
        chunk.setSize(slice.size);
        chunk.setAttempt(r.getAttempt());
        chunk.setHost(config_.host);
        chunk.setRelay(r.getRelay());
        chunk.setMissing(slice.missing);
        send(out);
        break;
      }
      case W::STOP_LAUNCHER: {
        const auto s = body.getStopLauncher();
        stop_launcher(s.getApp(), s.getGeneration(), s.getGraceMs());
        break;
      }
      case W::ACK: break;
      case W::ERROR:
        if (body.getError().getCode() == wire::ErrorCode::NOT_REGISTERED) {
          if (registered_) {  // else a registration is already on its way
            spdlog::info("coordinator has no session for us: registering again");
            registered_ = false;
            next_register_ = 0;
          }
        } else {
          spdlog::warn("coordinator error: {}", body.getError().getMessage().cStr());
        }
        break;
      default: {
        spdlog::warn("unhandled message '{}' from the coordinator", net::body_name(in->which()));
        auto out = net::make_error(in->request_id(), wire::ErrorCode::UNKNOWN_MESSAGE,
                                   "the nodelet does not handle '" + net::body_name(in->which()) + "'");
        send(out);
      }
    }
  } catch (const kj::Exception& e) {
    spdlog::warn("malformed message from the coordinator: {}", e.getDescription().cStr());
  }
}

void Nodelet::launch(wire::Launch::Reader launch) {
  const Key key{launch.getApp(), launch.getJob(), launch.getAttempt(), launch.getRank()};
  if (workers_.count(key)) return;  // a repeated order (coordinator restart): already running
  if (const auto it = finished_.find(key); it != finished_.end()) {
    report_exit(key, it->second);   // already ran: report again
    return;
  }
  const std::string job_id = std::to_string(launch.getApp()) + "_" + std::to_string(launch.getJob());
  JobAccount account;
  int log_fd = -1;
  const std::string log_name = "rank-" + std::to_string(launch.getRank()) + ".log";
  const std::string log_path = config_.work_dir + "/jobs/" + std::to_string(launch.getApp()) + "/" +
                               std::to_string(launch.getJob()) + "/attempt-" + std::to_string(launch.getAttempt()) +
                               "/" + log_name;
  try {
    account = resolve_job_account(launch.getAccount(), switch_users_, config_.allow_root_jobs, config_.host);
    // Its log directory is the account's own (0700): other users' jobs on this host cannot read it.
    const int dir_fd = open_private_directory(
        config_.work_dir + "/jobs",
        {std::to_string(launch.getApp()), std::to_string(launch.getJob()), "attempt-" + std::to_string(launch.getAttempt())},
        account);
    try {
      log_fd = open_private_file(dir_fd, log_name, account);
    } catch (...) {
      ::close(dir_fd);
      throw;
    }
    ::close(dir_fd);
  } catch (const std::runtime_error& e) {
    spdlog::warn("{} attempt {} rank {} refused: {}", job_id, launch.getAttempt(), launch.getRank(), e.what());
    report_exit(key, {kRefusedExit, 0, std::string(e.what()) + "\n"});
    return;
  }
  std::string devices;
  for (const auto d : launch.getDevices()) devices += (devices.empty() ? "" : ",") + std::to_string(d);
  const std::string rendezvous = launch.getRendezvous();
  const auto colon = rendezvous.rfind(':');
  std::vector<std::pair<std::string, std::string>> env = {
      {"THEMIS_RANK", std::to_string(launch.getRank())},
      {"THEMIS_WORLD_SIZE", std::to_string(launch.getWorldSize())},
      // The worker wants a URL (worker/env.h); the Launch order carries host:port.
      {"THEMIS_RENDEZVOUS", rendezvous.find("://") == std::string::npos ? "tcp://" + rendezvous : rendezvous},
      {"CUDA_VISIBLE_DEVICES", devices},
      {"THEMIS_CHECKPOINT_DIR", launch.getCheckpointDir()},
      {"THEMIS_APP", std::to_string(launch.getApp())},
      {"THEMIS_JOB", job_id},
      {"THEMIS_APP_ID", std::to_string(launch.getApp())},
      {"THEMIS_JOB_ID", job_id},
      {"THEMIS_JOB_INDEX", std::to_string(launch.getJob())},
      {"THEMIS_ATTEMPT", std::to_string(launch.getAttempt())},
      {"RANK", std::to_string(launch.getRank())},
      {kWorkDirVariable, config_.work_dir},
      {"WORLD_SIZE", std::to_string(launch.getWorldSize())},
      {"MASTER_ADDR", rendezvous.substr(0, colon)},
      {"MASTER_PORT", colon == std::string::npos ? "29500" : rendezvous.substr(colon + 1)},
  };
  for (const auto v : launch.getEnv()) env.emplace_back(v.getName(), v.getValue());
  std::vector<std::string> argv_storage;
  for (const auto part : launch.getCommand()) argv_storage.emplace_back(part);
  if (argv_storage.empty()) {
    ::close(log_fd);
    return;
  }
  auto env_storage = job_environment(environ, account, env);
  const auto argv = pointers(argv_storage);
  auto envp = pointers(env_storage);
  const std::string workdir = launch.getWorkdir();
  std::string checkpoint_dir = launch.getCheckpointDir();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    report_exit(key, {127, 0, "fork failed"});
    return;
  }
  if (pid == 0) {
    detach_child(parent, log_fd, account);  // workers die with the nodelet
    if (!workdir.empty() && ::chdir(workdir.c_str()) != 0) {
      std::fprintf(stderr, "themis-nodelet: cannot chdir to %s as %s: %s\n", workdir.c_str(), account.name.c_str(),
                   std::strerror(errno));
      ::_exit(127);
    }
    // Created by the job's own account, 0700: no other user reads its checkpoints, and the nodelet never
    // creates files as root in a path a user chose.
    if (!checkpoint_dir.empty() && !make_directories(checkpoint_dir.data())) {
      std::fprintf(stderr, "themis-nodelet: cannot create checkpoint directory %s as %s: %s\n", checkpoint_dir.c_str(),
                   account.name.c_str(), std::strerror(errno));
      ::_exit(kRefusedExit);
    }
    exec_or_exit(argv.data(), envp.data());
  }
  ::setpgid(pid, pid);
  workers_[key] = {pid, log_fd, 0, launch.getGraceMs() > 0 ? launch.getGraceMs()
                                                           : static_cast<std::uint32_t>(config_.grace_period_ms)};
  spdlog::info("started {} attempt {} rank {}/{} pid {} devices {} as {}, log {}", job_id, launch.getAttempt(),
               launch.getRank(), launch.getWorldSize(), pid, devices, account.name, log_path);
}

void Nodelet::stop(std::int64_t app, std::int64_t job, std::uint32_t attempt, std::uint32_t grace_ms) {
  for (auto& [key, worker] : workers_) {
    if (std::get<0>(key) != app || std::get<1>(key) != job || std::get<2>(key) != attempt) continue;
    if (worker.kill_at != 0) continue;
    ::kill(-worker.pid, SIGTERM);
    const double now = now_s();
    worker.kill_at = now + static_cast<double>(grace_ms) / 1000.0;
    if (now < stop_cap_) worker.kill_at = std::min(worker.kill_at, stop_cap_);
    spdlog::info("stopping {}_{} rank {} (grace {} ms)", app, job, std::get<3>(key), grace_ms);
  }
}

void Nodelet::enforce_deadlines() {
  const double now = now_s();
  for (auto& [app, launcher] : launchers_) {
    if (launcher.kill_at != 0 && now >= launcher.kill_at) {
      ::kill(-launcher.pid, SIGKILL);
      launcher.kill_at = now + 3600;
    }
  }
  for (auto& [key, worker] : workers_) {
    if (worker.kill_at != 0 && now >= worker.kill_at) {
      ::kill(-worker.pid, SIGKILL);
      worker.kill_at = now + 3600;  // sent; reap() collects it
    }
  }
}

void Nodelet::reap() {
  while (true) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (auto it = launchers_.begin(); it != launchers_.end(); ++it) {
      if (it->second.pid != pid) continue;
      ::kill(-pid, SIGKILL);
      report_launcher_exit(it->first, it->second.generation, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                           WIFSIGNALED(status) ? WTERMSIG(status) : 0, log_tail(it->second.log_fd));
      ::close(it->second.log_fd);
      std::error_code ignored;
      std::filesystem::remove_all(it->second.key_dir, ignored);
      launchers_.erase(it);
      break;
    }
    for (auto it = workers_.begin(); it != workers_.end(); ++it) {
      if (it->second.pid != pid) continue;
      ::kill(-pid, SIGKILL);  // anything the rank left behind in its group
      Exit exit;
      exit.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      exit.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      exit.tail = log_tail(it->second.log_fd);
      ::close(it->second.log_fd);
      const Key key = it->first;
      workers_.erase(it);
      finished_[key] = exit;
      report_exit(key, exit);
      break;
    }
  }
}

void Nodelet::report_launcher_exit(std::int64_t app, std::uint32_t generation, int code, int signal,
                                   const std::string& tail) {
  spdlog::info("launcher of app {} (generation {}) exited: code {} signal {}", app, generation, code, signal);
  if (stop_announced_) return;  // the coordinator ended this host's session and counts its launchers lost
  net::OutMessage out(request_id_++);
  auto e = out.body().initLauncherExited();
  e.setApp(app);
  e.setGeneration(generation);
  e.setExitCode(code);
  e.setSignal(signal);
  e.setLogTail(tail);
  send(out);
}

void Nodelet::report_exit(const Key& key, const Exit& exit) {
  spdlog::info("{}_{} attempt {} rank {} exited: code {} signal {}", std::get<0>(key), std::get<1>(key),
               std::get<2>(key), std::get<3>(key), exit.code, exit.signal);
  // After a clean stop the coordinator has requeued this host's jobs already (as lost ranks): a second
  // report of the same ranks would only reach their launchers twice.
  if (stop_announced_) return;
  net::OutMessage out(request_id_++);
  auto e = out.body().initExited();
  e.setApp(std::get<0>(key));
  e.setJob(std::get<1>(key));
  e.setAttempt(std::get<2>(key));
  e.setRank(std::get<3>(key));
  e.setExitCode(exit.code);
  e.setSignal(exit.signal);
  e.setLogTail(exit.tail);
  send(out);
}

double Nodelet::down_bound_s() const { return net::down_bound_s(heartbeat_interval_ms_, lives_); }

void Nodelet::note_answered(std::uint64_t request_id, double now) {
  const auto it = sent_at_.find(request_id);
  if (it == sent_at_.end()) return;  // an answer to something else, or to a message already superseded
  answered_at_ = std::max(answered_at_, it->second);
  sent_at_.erase(sent_at_.begin(), std::next(it));
  // Unanswered messages older than any fence deadline say nothing new.
  while (!sent_at_.empty() && now - sent_at_.begin()->second > 2 * net::fence_kill_s(heartbeat_interval_ms_, lives_)) {
    sent_at_.erase(sent_at_.begin());
  }
}

// The nodelet fences itself rather than the coordinator waiting for it: only the nodelet can stop its
// workers while it is cut off, and a checkpoint signal needs a grace period that the heartbeat bound
// alone cannot fit (with the defaults, 5 s x 3 lives, a 10 s grace would have to start after missing a
// single answer). So it starts one down bound after the coordinator may declare it down, caps the
// grace at one more, and the coordinator holds the lost jobs until then (net/fencing.h).
void Nodelet::fence_if_unheard(double now) {
  if (fenced_ || workers_.empty()) return;
  if (now - answered_at_ < net::fence_start_s(heartbeat_interval_ms_, lives_)) return;
  const double kill_by = answered_at_ + net::fence_kill_s(heartbeat_interval_ms_, lives_);
  spdlog::warn("no answer from the coordinator for {:.1f} s (down after {:.1f} s): fencing, stopping {} workers",
               now - answered_at_, down_bound_s(), workers_.size());
  for (auto& [key, worker] : workers_) {
    if (worker.kill_at == 0) {
      ::kill(-worker.pid, SIGTERM);
      worker.kill_at = std::min(now + static_cast<double>(worker.grace_ms) / 1000.0, kill_by);
    } else {
      worker.kill_at = std::min(worker.kill_at, kill_by);
    }
  }
  fenced_ = true;
  registered_ = false;
  next_register_ = 0;
}

// Ranks a killed nodelet left behind: its direct children die with it (PR_SET_PDEATHSIG), but what they
// started does not. No coordinator wants them any more (the lost job is requeued when this nodelet
// registers without them), so they get their checkpoint signal and then SIGKILL before this nodelet
// offers its GPUs again.
void Nodelet::stop_orphans_of_earlier_run() {
  const std::string marker = std::string(kWorkDirVariable) + "=" + config_.work_dir;
  auto orphans = processes_with_environment(marker);
  if (orphans.empty()) return;
  spdlog::warn("{} processes of an earlier run of this nodelet are still running: stopping them", orphans.size());
  for (const pid_t pid : orphans) ::kill(pid, SIGTERM);
  const double kill_at = now_s() + static_cast<double>(config_.grace_period_ms) / 1000.0;
  while (!stop_ && now_s() < kill_at && !(orphans = processes_with_environment(marker)).empty()) ::usleep(50000);
  for (const pid_t pid : processes_with_environment(marker)) ::kill(pid, SIGKILL);
}

void Nodelet::stop_all_and_wait() {
  if (workers_.empty() && launchers_.empty()) return;
  for (auto& [app, launcher] : launchers_) {
    ::kill(-launcher.pid, SIGTERM);
    launcher.kill_at = now_s() + 10;
  }
  for (auto& [key, worker] : workers_) {
    ::kill(-worker.pid, SIGTERM);
    worker.kill_at = now_s() + static_cast<double>(config_.grace_period_ms) / 1000.0;
  }
  while (!workers_.empty() || !launchers_.empty()) {
    reap();
    enforce_deadlines();
    ::usleep(20000);
  }
}

void Nodelet::fill_launchers(capnp::List<wire::RunningLauncher>::Builder launchers) const {
  unsigned i = 0;
  for (const auto& [app, launcher] : launchers_) {
    auto l = launchers[i++];
    l.setApp(app);
    l.setGeneration(launcher.generation);
    l.setPid(launcher.pid);
  }
}

void Nodelet::start_launcher(wire::StartLauncher::Reader start) {
  const std::int64_t app = start.getApp();
  const std::uint32_t generation = start.getGeneration();
  if (const auto it = launchers_.find(app); it != launchers_.end()) {
    if (it->second.generation == generation) return;  // a repeated order
    ::kill(-it->second.pid, SIGKILL);                  // an older generation: the coordinator replaced it
  }
  const auto refuse = [&](const std::string& why) {
    spdlog::warn("start of the launcher of app {} (generation {}) refused: {}", app, generation, why);
    report_launcher_exit(app, generation, kRefusedExit, 0, why + "\n");
  };
  JobAccount account;
  try {
    account = resolve_job_account(start.getAccount(), switch_users_, config_.allow_root_jobs, config_.host);
  } catch (const AccountRefused& e) {
    refuse(e.what());
    return;
  }
  // launchers/<app> stays the nodelet's: it writes the key below as root, where no user can swap a link in.
  const auto dir = std::filesystem::path(config_.work_dir) / "launchers" / std::to_string(app);
  const auto key_dir = dir / ("generation-" + std::to_string(generation));
  std::filesystem::create_directories(key_dir);
  std::filesystem::permissions(key_dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
  const std::string log_name = "launcher-" + std::to_string(generation) + ".log";
  std::vector<std::string> argv_storage = {config_.launcher_command, "--coordinator", config_.coordinator, "--app",
                                           std::to_string(app), "--generation", std::to_string(generation)};
  if (config_.insecure) {
    argv_storage.push_back("--insecure");
  } else {
    if (start.getSecretKey().size() == 0) {
      spdlog::warn("start of the launcher of app {} without a key refused (this nodelet uses CURVE)", app);
      return;
    }
    // The key travelled over the CURVE-encrypted connection; on disk only its owner can read it.
    net::write_certificate(key_dir.string(), "launcher", {start.getPublicKey(), start.getSecretKey()}, true);
    argv_storage.insert(argv_storage.end(), {"--key", (key_dir / "launcher.key_secret").string(), "--server-key",
                                             config_.coordinator_key, "--reports", "tcp://*:*", "--report-address",
                                             config_.address});
  }
  int log_fd = -1;
  try {
    if (account.switch_user) {
      std::error_code error;
      for (const auto& path : {key_dir, key_dir / "launcher.key", key_dir / "launcher.key_secret"}) {
        if (std::filesystem::exists(path, error) && ::lchown(path.c_str(), account.uid, account.gid) != 0) {
          throw std::runtime_error("cannot hand " + path.string() + " to " + account.name + ": " + std::strerror(errno));
        }
      }
    }
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir_fd < 0) throw std::runtime_error("cannot open " + dir.string() + ": " + std::strerror(errno));
    try {
      log_fd = open_private_file(dir_fd, log_name, account);
    } catch (...) {
      ::close(dir_fd);
      throw;
    }
    ::close(dir_fd);
  } catch (const std::runtime_error& e) {
    refuse(e.what());
    return;
  }
  auto env_storage = job_environment(environ, account, {});
  const auto argv = pointers(argv_storage);
  auto envp = pointers(env_storage);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    spdlog::error("cannot start the launcher of app {}: fork failed", app);
    return;
  }
  if (pid == 0) {
    detach_child(parent, log_fd, account);  // the coordinator starts it elsewhere if this host goes
    exec_or_exit(argv.data(), envp.data());
  }
  ::setpgid(pid, pid);
  launchers_[app] = {generation, pid, log_fd, key_dir.string(), 0};
  spdlog::info("started the launcher of app {} (generation {}) pid {} as {}, log {}", app, generation, pid,
               account.name, (dir / log_name).string());
}

void Nodelet::stop_launcher(std::int64_t app, std::uint32_t generation, std::uint32_t grace_ms) {
  const auto it = launchers_.find(app);
  if (it == launchers_.end() || it->second.generation != generation || it->second.kill_at != 0) return;
  ::kill(-it->second.pid, SIGTERM);
  it->second.kill_at = now_s() + static_cast<double>(grace_ms) / 1000.0;
  spdlog::info("stopping the launcher of app {} (generation {})", app, generation);
}

}  // namespace themis::nodelet
