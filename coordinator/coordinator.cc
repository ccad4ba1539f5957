#include "coordinator/coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "spec/app_spec.h"
#include "coordinator/loop_metrics.h"
#include "coordinator/policy_factory.h"
#include "coordinator/store/event_kinds.h"
#include "net/curve_keys.h"
#include "net/fencing.h"
#include "net/sd_notify.h"
#include "net/socket_security.h"

namespace themis::coordinator {

using nlohmann::json;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

// Bounds on what one host may declare. A Cap'n Proto list of empty structs costs one word per element on
// the wire, so without them a single message could make the coordinator run millions of queries.
constexpr std::size_t kMaxGpusPerHost = 1024;
constexpr std::size_t kMaxListedPerHost = 4096;  // running workers, and running launchers

// `field` of `message` lists `count` of `what` on `host`: at most kMaxListedPerHost.
void check_host_list(const std::string& message, const char* field, const char* what, const std::string& host,
                     std::size_t count) {
  if (count > kMaxListedPerHost) {
    throw std::runtime_error(message + ": " + field + ": host '" + host + "' lists " + std::to_string(count) + " " + what +
                             "; at most " + std::to_string(kMaxListedPerHost) + " per host");
  }
}

}  // namespace

class Coordinator::RouterEnv : public Env {
 public:
  explicit RouterEnv(zmq::socket_t& router) : router_(router) {}
  double now() override { return unix_now(); }
  void send(const std::string& routing_id, zmq::message_t frame) override {
    router_.send(zmq::buffer(routing_id), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    router_.send(frame, zmq::send_flags::dontwait);
  }

 private:
  zmq::socket_t& router_;
};

Coordinator::Coordinator(const CoordinatorConfig& config) : Coordinator(config, nullptr) {}

Coordinator::Coordinator(const CoordinatorConfig& config, Env& env) : Coordinator(config, &env) {}

Coordinator::Coordinator(const CoordinatorConfig& config, Env* injected)
    : config_(config),
      own_env_(injected ? nullptr : std::make_unique<RouterEnv>(router_)),
      env_(injected ? injected : own_env_.get()),
      context_(1),
      router_(injected ? zmq::socket_t() : zmq::socket_t(context_, zmq::socket_type::router)),
      db_(config.database),
      checkpointer_(db_, kCheckpointInterval),
      policy_(make_coordinator_policy(config)),
      rng_(static_cast<std::uint64_t>(config.seed)) {
  loop_metrics::declare(metrics_);
  if (injected) {
    started_at_ = env_->now();
    for (const auto& host : hosts_.up_hosts()) sessions_[host] = HostSession{"", "", started_at_, 0, {}};
    trigger("coordinator start");
    return;
  }
  if (config_.insecure) {
    if (!net::is_loopback_endpoint(config_.listen)) {
      throw std::invalid_argument("coordinator.insecure: refusing to listen on " + config_.listen +
                                  " without CURVE; insecure mode binds loopback only (tcp://127.0.0.1:PORT)");
    }
    spdlog::warn("**************************************************************************");
    spdlog::warn("* INSECURE MODE: no CURVE encryption, no authentication; every peer is   *");
    spdlog::warn("* treated as admin. Loopback only. Never use this on a shared machine.   *");
    spdlog::warn("**************************************************************************");
  } else {
    const auto keys = net::read_certificate(config_.secret_key);
    if (keys.secret_key.empty()) throw std::invalid_argument(config_.secret_key + ": no secret-key in certificate");
    zap_ = std::make_unique<net::ZapHandler>(context_, net::read_authorized_keys(config_.authorized_keys));
    net::make_curve_server(router_, keys);
  }
  router_.set(zmq::sockopt::linger, 0);
  router_.set(zmq::sockopt::router_handover, 1);
  router_.bind(config_.listen);
  endpoint_ = router_.get(zmq::sockopt::last_endpoint);
  started_at_ = env_->now();
  // Hosts the database says are up get a fresh set of lives: they re-register when they hear from us.
  for (const auto& host : hosts_.up_hosts()) sessions_[host] = HostSession{"", "", started_at_, 0, {}};
  spdlog::info("coordinator listening on {} (policy {}, database {}, {} hosts remembered)", endpoint_,
               policy_->name(), config_.database, sessions_.size());
  trigger("coordinator start");
}

Coordinator::~Coordinator() {
  router_.close();
  zap_.reset();
}

void Coordinator::trigger(const std::string& why) {
  if (!round_requested_at_) {
    round_requested_at_ = env_->now();
    round_trigger_ = why;
  } else if (round_trigger_.find(why) == std::string::npos && round_trigger_.size() < 200) {
    round_trigger_ += ", " + why;
  }
}

void Coordinator::run() {
  if (own_env_ == nullptr) throw std::logic_error("Coordinator::run: this coordinator has no socket (an Env was injected)");
  net::sd_notify("READY=1\nSTATUS=serving on " + endpoint_);
  constexpr std::chrono::steady_clock::duration kMinDrain = std::chrono::milliseconds(20);
  std::chrono::steady_clock::duration last_tick{};
  while (!stop_) {
    zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
    try {
      zmq::poll(&item, 1, std::chrono::milliseconds(20));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;  // a signal: the loop condition decides
      throw;
    }
    // A stream of requests must not hold the tick (rounds, expiries, lost hosts) back, and a costly tick must
    // not starve the messages (heartbeats among them): the drain stops once it has had as long as the last
    // tick took, and never sooner than kMinDrain (docs/reliability.md "Load").
    begin_loop_turn();
    const auto drain_until = std::chrono::steady_clock::now() + std::max(kMinDrain, last_tick);
    for (int i = 0; i < 1000 && (item.revents & ZMQ_POLLIN); ++i) {
      const PhaseTimer timer(turn_.messages);
      if (i > 0 && std::chrono::steady_clock::now() >= drain_until) break;
      zmq::message_t identity;
      if (!router_.recv(identity, zmq::recv_flags::dontwait)) break;
      std::vector<zmq::message_t> frames;
      while (true) {
        zmq::message_t frame;
        if (!router_.recv(frame, zmq::recv_flags::dontwait)) break;
        const bool more = frame.more();
        frames.push_back(std::move(frame));
        if (!more) break;
      }
      const std::string routing_id = identity.to_string();
      if (frames.size() != 1) {
        spdlog::warn("dropping a message of {} frames from a peer (expected 1)", frames.size());
        auto error = net::make_error(0, wire::ErrorCode::MALFORMED, "expected exactly one frame per message");
        reply(routing_id, error);
        continue;
      }
      ++turn_.messages_read;
      handle(routing_id, frames[0]);
    }
    if (!(router_.get(zmq::sockopt::events) & ZMQ_POLLIN)) unread_since_ = 0;
    else if (unread_since_ == 0) unread_since_ = env_->now();
    const auto tick_start = std::chrono::steady_clock::now();
    try {
      tick();
      if (tick_failures_ > 0) spdlog::info("tick works again after {} failures", tick_failures_);
      tick_failures_ = 0;
    } catch (const std::exception& e) {
      // Every 20 ms while the disk is full: the first failure, a new reason, then one line a minute.
      const double now = env_->now();
      if (tick_failures_++ == 0 || e.what() != last_tick_error_ || now - last_tick_error_logged_ >= 60) {
        spdlog::error("tick failed ({} in a row): {}", tick_failures_, e.what());
        last_tick_error_ = e.what();
        last_tick_error_logged_ = now;
      }
    }
    last_tick = std::chrono::steady_clock::now() - tick_start;
    end_loop_turn();
    // The loop turns even while ticks fail (disk full): systemd restarting it would not free the disk.
    if (const auto usec = net::sd_watchdog_usec(); usec > 0) {
      const double now = env_->now();
      if ((now - last_watchdog_) * 2e6 > static_cast<double>(usec)) {
        net::sd_notify("WATCHDOG=1");
        last_watchdog_ = now;
      }
    }
  }
  net::sd_notify("STOPPING=1");
  db_.optimize();
  spdlog::info("coordinator stopped");
}

namespace {
double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

void Coordinator::begin_loop_turn() {
  turn_ = LoopPhases{};
  turn_.commits_before = db_.commit_clock();
  turn_started_ = std::chrono::steady_clock::now();
}

void Coordinator::end_loop_turn() {
  if (!turn_started_) return;
  const double took_ms = ms_since(*turn_started_);
  turn_started_.reset();
  worst_loop_lag_ms_ = std::max(worst_loop_lag_ms_, took_ms);
  metrics_.observe(loop_metrics::kLoopTurn, took_ms / 1e3);
  if (took_ms <= static_cast<double>(config_.slow_loop_threshold_ms)) return;
  const auto& commits = db_.commit_clock();
  spdlog::warn("slow loop turn: {:.1f} ms (threshold {} ms): messages {:.1f} ms ({} read), heartbeat check {:.1f} ms, "
               "round {:.1f} ms, launches {:.1f} ms, other {:.1f} ms; of which SQLite commits {:.1f} ms ({})",
               took_ms, config_.slow_loop_threshold_ms, turn_.messages * 1e3, turn_.messages_read,
               turn_.heartbeats * 1e3, turn_.round * 1e3, turn_.launches * 1e3, turn_.other * 1e3,
               (commits.seconds - turn_.commits_before.seconds) * 1e3, commits.commits - turn_.commits_before.commits);
}

double Coordinator::take_worst_loop_lag_ms() {
  const double worst = std::max(worst_loop_lag_ms_, turn_started_ ? ms_since(*turn_started_) : 0.0);
  worst_loop_lag_ms_ = 0;
  return worst;
}

void Coordinator::reply(const std::string& routing_id, net::OutMessage& message) {
  if (routing_id.empty()) return;
  env_->send(routing_id, message.to_frame());
}

void Coordinator::send_to_host(const std::string& host, net::OutMessage& message) {
  const auto it = sessions_.find(host);
  if (it == sessions_.end() || it->second.routing_id.empty()) return;
  reply(it->second.routing_id, message);
}

std::string Coordinator::host_of_routing(const std::string& routing_id) const {
  for (const auto& [host, session] : sessions_) {
    if (session.routing_id == routing_id) return host;
  }
  return {};
}

void Coordinator::handle(const std::string& routing_id, const zmq::message_t& frame) {
  Caller caller{net::Role::kAdmin, "local"};
  if (!config_.insecure) {
    const char* user_id = zmq_msg_gets(const_cast<zmq_msg_t*>(frame.handle()), "User-Id");
    const auto principal = net::parse_user_id(user_id ? user_id : "");
    if (!principal) {
      spdlog::warn("message without an authenticated identity dropped");
      return;
    }
    caller = {principal->role, principal->name};
  }
  dispatch(routing_id, caller, frame);
}

void Coordinator::dispatch(const std::string& routing_id, const Caller& caller, const zmq::message_t& frame) {
  wire::ErrorCode code{};
  std::string error;
  auto in = net::InMessage::parse(frame, &code, &error);
  if (!in) {
    spdlog::warn("bad message from {}:{}: {}", net::to_string(caller.role), caller.name, error);
    auto out = net::make_error(0, code, error);
    reply(routing_id, out);
    return;
  }
  using W = wire::Envelope::Body::Which;
  try {
    const auto which = in->which();
    const bool node_message =
        which == W::REGISTER || which == W::HEARTBEAT || which == W::EXITED || which == W::LAUNCHER_EXITED ||
        which == W::NODELET_STOPPING || which == W::LOG_CHUNK;
    if (node_message && caller.role != net::Role::kNode && !config_.insecure) {
      throw denied("" + net::body_name(which) + " is for node keys only");
    }
    switch (which) {
      case W::REGISTER: on_register(routing_id, caller, *in); break;
      case W::HEARTBEAT: on_heartbeat(routing_id, caller, *in); break;
      case W::EXITED: on_exited(routing_id, caller, *in); break;
      case W::SUBMIT: on_submit(routing_id, caller, *in); break;
      case W::CANCEL: on_cancel(routing_id, caller, *in); break;
      case W::QUERY: on_query(routing_id, caller, *in); break;
      case W::ATTACH: on_attach(routing_id, caller, *in); break;
      case W::BID: on_bid(routing_id, caller, *in); break;
      case W::LAUNCH_JOB: on_launch_job(routing_id, caller, *in); break;
      case W::STOP_JOB: on_stop_job(routing_id, caller, *in); break;
      case W::APP_STATUS: on_app_status(routing_id, caller, *in); break;
      case W::LAUNCHER_EXITED: on_launcher_exited(routing_id, caller, *in); break;
      case W::NODELET_STOPPING: on_nodelet_stopping(routing_id, caller, *in); break;
      case W::DRAIN: on_drain(routing_id, caller, *in); break;
      case W::RESUME: on_resume(routing_id, caller, *in); break;
      case W::READ_LOG: on_read_log(routing_id, caller, *in); break;
      case W::LOG_CHUNK: on_log_chunk(routing_id, caller, *in); break;
      case W::ACK: break;
      case W::ERROR:
        spdlog::warn("error from {}: {}", caller.name, in->envelope().getBody().getError().getMessage().cStr());
        break;
      default: {
        spdlog::warn("unhandled message '{}' from {}:{}", net::body_name(which), net::to_string(caller.role), caller.name);
        auto out = net::make_error(in->request_id(), wire::ErrorCode::UNKNOWN_MESSAGE,
                                   "the coordinator does not handle '" + net::body_name(which) + "' messages");
        reply(routing_id, out);
      }
    }
  } catch (const kj::Exception& e) {
    spdlog::warn("malformed message from {}: {}", caller.name, e.getDescription().cStr());
    auto out = net::make_error(in->request_id(), wire::ErrorCode::MALFORMED, e.getDescription().cStr());
    reply(routing_id, out);
  } catch (const RequestError& e) {
    spdlog::warn("request from {}:{} refused: {}", net::to_string(caller.role), caller.name, e.what());
    auto out = net::make_error(in->request_id(), e.code(), e.what());
    reply(routing_id, out);
  } catch (const std::exception& e) {
    spdlog::warn("request from {}:{} failed: {}", net::to_string(caller.role), caller.name, e.what());
    auto out = net::make_error(in->request_id(), wire::ErrorCode::INTERNAL, e.what());
    reply(routing_id, out);
  }
  flush_outbox();
}

void Coordinator::event(double now, const std::string& kind, std::optional<std::int64_t> app,
                        std::optional<std::int64_t> job, const std::string& host, std::optional<std::int64_t> round,
                        const std::string& message) {
  if (!store::is_event_kind(kind)) spdlog::error("event kind '{}' is not in the table of event kinds (store/event_kinds.cc)", kind);
  events_.insert({now, kind, app, job, host, round, message});
}

void Coordinator::queue_stop(const std::string& host, std::int64_t app, std::int64_t job, std::int64_t attempt,
                             int grace_ms, const std::string& reason) {
  auto message = std::make_unique<net::OutMessage>(next_request_id_++);
  auto stop = message->body().initStop();
  stop.setApp(app);
  stop.setJob(job);
  stop.setAttempt(static_cast<std::uint32_t>(attempt));
  stop.setGraceMs(static_cast<std::uint32_t>(grace_ms));
  stop.setReason(reason);
  outbox_.push_back({host, std::move(message)});
}

void Coordinator::flush_outbox() {
  for (auto& out : outbox_) send_to_host(out.host, *out.message);
  outbox_.clear();
}

// ---------------------------------------------------------------- nodes

void Coordinator::on_register(const std::string& routing_id, const Caller& caller, const net::InMessage& in) {
  const auto reg = in.envelope().getBody().getRegister();
  const std::string host = reg.getHost();
  if (host.empty() || host.size() > 128) throw std::runtime_error("register: host name must be 1 to 128 characters");
  if (!config_.insecure && caller.name != host) {
    throw denied("key of node '" + caller.name + "' cannot register host '" + host + "'");
  }
  if (reg.getSlots().size() > kMaxGpusPerHost) {
    throw std::runtime_error("register: slots: host '" + host + "' declares " + std::to_string(reg.getSlots().size()) +
                             " slots; at most " + std::to_string(kMaxGpusPerHost));
  }
  std::size_t gpus_declared = 0;
  for (const auto slot : reg.getSlots()) {
    gpus_declared += slot.getGpus().size();
    if (gpus_declared > kMaxGpusPerHost) {
      throw std::runtime_error("register: slots: host '" + host + "' declares more than " +
                               std::to_string(kMaxGpusPerHost) + " GPUs");
    }
  }
  const int gpu_count = static_cast<int>(gpus_declared);
  if (gpu_count == 0) throw std::runtime_error("register: host '" + host + "' declares no GPUs");
  check_host_list("register", "running", "workers", host, reg.getRunning().size());
  check_host_list("register", "launchers", "launchers", host, reg.getLaunchers().size());
  const double now = env_->now();
  std::int64_t first_gpu = 0;
  {
    store::Database::Transaction tx(db_);
    if (const auto existing = hosts_.find(host)) {
      first_gpu = existing->first_gpu;
      if (existing->gpu_count != gpu_count) {
        throw std::runtime_error("register: host '" + host + "' now declares " + std::to_string(gpu_count) +
                                 " GPUs but was registered with " + std::to_string(existing->gpu_count) +
                                 "; a host's GPU layout cannot change (give it a new name)");
      }
      hosts_.mark_up(existing->id, std::string(reg.getRack()), now);
      event(now, "HostUp", std::nullopt, std::nullopt, host, std::nullopt, "re-registered");
    } else {
      std::vector<store::HostStore::DeclaredSlot> slots;
      for (const auto slot : reg.getSlots()) {
        auto& declared = slots.emplace_back();
        for (const auto g : slot.getGpus()) {
          declared.push_back({static_cast<std::int64_t>(g.getLocalIndex()), std::string(g.getModel())});
        }
      }
      first_gpu = hosts_.add(host, std::string(reg.getRack()), slots, static_cast<std::int64_t>(gpu_count), now);
      event(now, "HostJoined", std::nullopt, std::nullopt, host, std::nullopt,
            std::to_string(gpu_count) + " GPUs, rack " + std::string(reg.getRack()));
    }
    tx.commit();
  }
  // Another connection registering the same host replaces the old session.
  auto& session = sessions_[host];
  session.routing_id = routing_id;
  session.address = reg.getAddress().size() > 0 ? std::string(reg.getAddress()) : host;
  session.last_heard = now;
  session.heartbeat_written = now;  // the registration wrote hosts.last_heartbeat
  metrics_.set(loop_metrics::kHostLastHeartbeat, now, {{"host", host}});
  spdlog::info("host {} registered ({} GPUs from index {}, {} workers running)", host, gpu_count, first_gpu,
               reg.getRunning().size());
  net::OutMessage out(in.request_id());
  auto registered = out.body().initRegistered();
  registered.setHeartbeatIntervalMs(static_cast<std::uint32_t>(config_.heartbeat_interval_ms));
  registered.setLives(static_cast<std::uint32_t>(config_.heartbeat_lives));
  registered.setFirstGpu(static_cast<std::int32_t>(first_gpu));
  reply(routing_id, out);
  reconcile_host(host, reg.getRunning(), now);
  reconcile_launchers(host, reg.getLaunchers(), now);
  trigger("host joined");
}

void Coordinator::on_heartbeat(const std::string& routing_id, const Caller& caller, const net::InMessage& in) {
  const std::string host = host_of_routing(routing_id);
  if (host.empty() || (!config_.insecure && host != caller.name)) {
    auto out = net::make_error(in.request_id(), wire::ErrorCode::NOT_REGISTERED,
                               "no session for this connection: register again");
    reply(routing_id, out);
    return;
  }
  const auto heartbeat = in.envelope().getBody().getHeartbeat();
  check_host_list("heartbeat", "running", "workers", host, heartbeat.getRunning().size());
  check_host_list("heartbeat", "launchers", "launchers", host, heartbeat.getLaunchers().size());
  const double now = env_->now();
  auto& session = sessions_[host];
  session.last_heard = now;
  metrics_.set(loop_metrics::kHostLastHeartbeat, now, {{"host", host}});
  // Liveness is the session above; the column is for readers, written once a second at most: a write per
  // heartbeat is a commit (a sync) per heartbeat, and under disk load those held the loop for seconds
  // (docs/reliability.md "Under load").
  if (now - session.heartbeat_written >= kHeartbeatWriteInterval) {
    try {
      hosts_.write_heartbeat(host, now);
      session.heartbeat_written = now;
    } catch (const store::DatabaseError& e) {
      // Refusing the heartbeat because the disk is full would make the nodelet fence itself and kill workers
      // that nothing else is wrong with.
      spdlog::warn("heartbeat of {} not recorded: {}", host, e.what());
    }
  }
  net::OutMessage out(in.request_id());
  auto ack = out.body().initHeartbeatAck();
  ack.setSeq(heartbeat.getSeq());
  ack.setNextIntervalMs(static_cast<std::uint32_t>(config_.heartbeat_interval_ms));
  ack.setLives(static_cast<std::uint32_t>(config_.heartbeat_lives));
  reply(routing_id, out);
  reconcile_host(host, heartbeat.getRunning(), now);
  reconcile_launchers(host, heartbeat.getLaunchers(), now);
}

void Coordinator::reconcile_host(const std::string& host, capnp::List<wire::RunningWorker>::Reader running,
                                 double now) {
  store::Database::Transaction tx(db_);
  bool changed = false;
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  auto& unleased = sessions_[host].unleased_ranks;
  unleased.clear();
  for (const auto worker : running) {
    seen.insert({worker.getApp(), worker.getJob()});
    const auto job = job_exits_.current_attempt(worker.getApp(), worker.getJob());
    const std::string state = job ? job->state : "";
    const bool current = job && job->attempt == static_cast<std::int64_t>(worker.getAttempt());
    if (!current || (state != "STARTING" && state != "RUNNING" && state != "STOPPING")) {
      const JobKey key{worker.getApp(), worker.getJob(), worker.getAttempt()};
      spdlog::warn("host {} runs {}_{} attempt {} rank {} without a lease: stopping it", host, worker.getApp(),
                   worker.getJob(), worker.getAttempt(), worker.getRank());
      unleased.insert({worker.getApp(), worker.getJob(), worker.getAttempt(), worker.getRank()});
      if (!launched_.count(key) || state != "STOPPING") {
        queue_stop(host, worker.getApp(), worker.getJob(), worker.getAttempt(), 5000, "no lease");
      }
      continue;
    }
    if (state == "STOPPING") {
      // Resend the stop once per coordinator process (it may have been lost in a restart).
      const JobKey key{worker.getApp(), worker.getJob(), worker.getAttempt()};
      if (!launched_.count(key)) {
        launched_.insert(key);
        queue_stop(host, worker.getApp(), worker.getJob(), worker.getAttempt(), 5000, "stopping");
      }
    }
    if (state == "STARTING") {
      states_.move_job(worker.getApp(), worker.getJob(), JobEvent::kWorkersUp, "", now);
      states_.move_app(worker.getApp(), AppState::kRunning, now);
      event(now, "Running", worker.getApp(), worker.getJob(), host, std::nullopt, "workers up");
      launched_.insert({worker.getApp(), worker.getJob(), worker.getAttempt()});
    }
  }
  // Running jobs with GPUs here but no worker here: their workers are gone.
  std::vector<std::pair<std::int64_t, std::int64_t>> lost;
  for (const auto& key : hosts_.running_jobs_without_exits_on(host)) {
    if (!seen.count(key)) lost.push_back(key);
  }
  for (const auto& [app, job] : lost) {
    spdlog::warn("job {}_{} has no workers on {} any more: releasing its leases", app, job, host);
    event(now, "WorkersLost", app, job, host, std::nullopt, "host reports no worker of the running job");
    const std::int64_t lost_attempt = job_exits_.attempt(app, job);
    stop_job(app, job, now, "WorkersLost");
    after_node_loss(app, job, lost_attempt, "host " + host + " reports no worker of the running job", now);
    finish_app_if_done(app, now);
    changed = true;
  }
  // Stopping jobs with GPUs here and no worker here: an exit sent while the coordinator was down is lost,
  // and the job would stay STOPPING, holding its GPUs back, for ever. Once every host of its placement has
  // reported none of its workers, it ends as its last exit would have ended it. A job that began stopping
  // within two heartbeats may have a Launch still on its way, so it waits.
  std::vector<std::pair<JobKey, std::string>> quiet;
  for (auto it = stopped_on_.begin(); it != stopped_on_.end();) {  // attempts whose exits did arrive
    const bool still = job_exits_.is_stopping(std::get<0>(it->first), std::get<1>(it->first), std::get<2>(it->first));
    it = still ? std::next(it) : stopped_on_.erase(it);
  }
  const double stopping_since = now - 2.0 * static_cast<double>(config_.heartbeat_interval_ms) / 1000.0;
  for (const auto& stopping : hosts_.stopping_jobs_on(host, stopping_since)) {
    if (seen.count({stopping.app, stopping.job})) continue;
    quiet.push_back({JobKey{stopping.app, stopping.job, stopping.attempt}, stopping.reason});
  }
  for (const auto& [key, reason] : quiet) {
    const auto [app, job, attempt] = key;
    auto& hosts_done = stopped_on_[key];
    hosts_done.insert(host);
    bool all_done = true;
    for (const auto& up : hosts_.up_hosts_of_job(app, job)) all_done = all_done && hosts_done.count(up) > 0;
    if (!all_done) continue;
    stopped_on_.erase(key);
    const std::string end(to_string(end_of_stop(reason)));
    const std::string end_reason = end_of_stop(reason) == JobState::kFailed ? failed_reason(app, job, attempt) : reason;
    spdlog::warn("job {}_{} attempt {} is stopping but no host runs its workers: {}", app, job, attempt, end);
    states_.move_job(app, job, JobEvent::kStopped, end_reason, now, reason);
    if (reason == "Preempted") record_preemption(app, job, attempt, now);
    event(now, store::job_end_event(end), app, job, host, std::nullopt, end_reason + " (no worker left; exit not received)");
    finish_app_if_done(app, now);
    changed = true;
  }
  tx.commit();
  if (changed) trigger("workers lost");
}

void Coordinator::on_exited(const std::string& routing_id, const Caller& /*caller*/, const net::InMessage& in) {
  const std::string host = host_of_routing(routing_id);
  const auto exited = in.envelope().getBody().getExited();
  const std::int64_t app = exited.getApp();
  const std::int64_t job_index = exited.getJob();
  const double now = env_->now();
  net::OutMessage ack(in.request_id());
  ack.body().initAck().setMessage("exit recorded");
  reply(routing_id, ack);
  forward_exit(app, exited);
  if (const auto session = sessions_.find(host); session != sessions_.end()) {
    session->second.unleased_ranks.erase({app, job_index, exited.getAttempt(), exited.getRank()});
  }
  store::Database::Transaction tx(db_);
  const auto job = job_exits_.exit_tally(app, job_index);
  if (!job || job->attempt != static_cast<std::int64_t>(exited.getAttempt())) {
    spdlog::info("exit of {}_{} attempt {} from {} is for an old attempt; ignored", app, job_index,
                 exited.getAttempt(), host);
    return;
  }
  const std::string state = job->state;
  const std::string reason = job->reason;
  const std::int64_t ranks_exited = job->exited_ranks + 1;
  const std::int64_t world = job->world;
  const bool success = exited.getExitCode() == 0 && exited.getSignal() == 0;
  job_exits_.record_rank_exit(app, job_index, ranks_exited, static_cast<std::int64_t>(exited.getExitCode()),
                              static_cast<std::int64_t>(exited.getSignal()), success, std::string(exited.getLogTail()));
  const std::string status = "rank " + std::to_string(exited.getRank()) + " exit " +
                             std::to_string(exited.getExitCode()) + " signal " + std::to_string(exited.getSignal());
  event(now, "RankExited", app, job_index, host, std::nullopt, status);
  bool changed = false;
  if (state == "STOPPING") {
    const auto attempt = static_cast<std::int64_t>(exited.getAttempt());
    std::string stop_reason = reason;
    if (!success && (reason == "RankFailed" || reason == "Backoff")) {
      refine_failed_exit(app, job_index, attempt, exited.getExitCode(), exited.getSignal(), exited.getLogTail(), now);
      if (auto again = job_exits_.reason(app, job_index)) stop_reason = std::move(*again);
    }
    if (ranks_exited >= world) {
      const std::string final_state(to_string(end_of_stop(stop_reason)));
      const std::string final_reason =
          end_of_stop(stop_reason) == JobState::kFailed ? failed_reason(app, job_index, attempt) : stop_reason;
      states_.move_job(app, job_index, JobEvent::kStopped, final_reason, now, stop_reason);
      if (stop_reason == "Preempted") record_preemption(app, job_index, attempt, now);
      event(now, store::job_end_event(final_state), app, job_index, host, std::nullopt, final_reason);
      changed = true;
    }
  } else if (state == "RUNNING" || state == "STARTING") {
    if (success) {
      if (ranks_exited >= world) {
        states_.move_job(app, job_index, JobEvent::kSucceeded, "Done", now);
        release_job_leases(app, job_index, now, "completed");
        event(now, "Completed", app, job_index, host, std::nullopt, "all ranks exited 0");
        changed = true;
      }
    } else {
      job_exits_.set_failed_exit(app, job_index, static_cast<std::int64_t>(exited.getExitCode()),
                                 static_cast<std::int64_t>(exited.getSignal()), std::string(exited.getLogTail()));
      event(now, "Failed", app, job_index, host, std::nullopt, status);
      const auto attempt = static_cast<std::int64_t>(exited.getAttempt());
      const std::string stop_reason = record_failed_exit(app, job_index, attempt, exited.getExitCode(), exited.getSignal(),
                                                         exited.getLogTail(), now);
      if (ranks_exited >= world) {
        const bool retry = stop_reason == "Backoff";
        states_.move_job(app, job_index, retry ? JobEvent::kRetried : JobEvent::kFailed,
                         retry ? stop_reason : failed_reason(app, job_index, attempt), now);
        release_job_leases(app, job_index, now, "failed");
      } else {
        stop_job(app, job_index, now, stop_reason);
      }
      changed = true;
    }
  }
  if (changed) finish_app_if_done(app, now);
  tx.commit();
  if (changed) trigger("job finished");
}

void Coordinator::release_job_leases(std::int64_t app, std::int64_t job, double now, const std::string& reason) {
  if (has_launcher(app)) return;  // its leases are the app's, not the job's
  lease_releases_.release_job(app, job, now, reason);
}

// Moves a STARTING/RUNNING job to STOPPING (or straight to its end state when nothing runs), releases its
// leases and queues Stop orders to every host of its placement.
void Coordinator::stop_job(std::int64_t app, std::int64_t job, double now, const std::string& reason) {
  const auto target = job_exits_.stop_target(app, job);
  if (!target) return;
  const std::int64_t attempt = target->attempt;
  const std::string state = target->state;
  const int grace = static_cast<int>(target->grace_ms);
  release_job_leases(app, job, now, reason);
  if (state == "PENDING") {
    if (reason == "Cancelled") {
      states_.move_job(app, job, JobEvent::kCancelled, "Cancelled", now);
    }
    return;
  }
  if (state != "STARTING" && state != "RUNNING") return;
  // Hosts of the placement that are still up get a Stop; a job whose hosts are all gone ends now.
  int reachable = 0;
  // A STARTING job whose launch this process never sent has no workers to wait for: a stop would
  // find nothing and no exit would ever come back.
  const bool never_launched = state == "STARTING" && !launched_.count(JobKey{app, job, attempt});
  for (const auto& [host, up] : hosts_.hosts_of_job(app, job)) {
    if (never_launched || !up || reason == "NodeFail" || reason == "WorkersLost") continue;
    ++reachable;
    queue_stop(host, app, job, attempt, grace, reason);
  }
  const bool can_wait = reachable > 0 && reason != "NodeFail" && reason != "WorkersLost";
  if (can_wait) {
    states_.move_job(app, job, JobEvent::kStopSent, reason, now);
    return;
  }
  // Nothing to wait for: other ranks (if any) are told to stop, but their exits are of an old attempt.
  for (const auto& other : hosts_.up_hosts_of_job(app, job)) queue_stop(other, app, job, attempt, grace, reason);
  states_.move_job(app, job, JobEvent::kStopped, reason, now, reason);
}

void Coordinator::finish_app_if_done(std::int64_t app, double now) {
  // An app with a launcher ends when its launcher says so (successive halving reruns completed jobs).
  if (has_launcher(app)) return;
  const JobCounts jobs = states_.job_counts(app);
  const AppState next = app_state_from_jobs(jobs);
  const auto completed = jobs.completed, failed = jobs.failed, cancelled = jobs.cancelled;
  if (!is_final(next)) {
    states_.move_app(app, next, now);
    return;
  }
  const std::string state(to_string(next));
  if (states_.move_app(app, next, now)) {
    event(now, store::app_end_event(state), app, std::nullopt, "",
          std::nullopt, std::to_string(completed) + " completed, " + std::to_string(failed) + " failed, " +
                            std::to_string(cancelled) + " cancelled");
  }
}

void Coordinator::check_heartbeats(double now) {
  const double limit = static_cast<double>(config_.heartbeat_interval_ms * config_.heartbeat_lives) / 1000.0;
  // A host is silent only if the coordinator read everything that had arrived: when one message took
  // seconds (a slow disk under the database) the drain stopped with heartbeats still in the socket, and
  // hosts that were sending them were declared down at once. The check waits for the socket to be read
  // empty, for at most one more `limit` under a sustained stream of requests.
  if (unread_since_ > 0 && now - unread_since_ < limit) return;
  std::vector<std::string> down;
  for (const auto& [host, session] : sessions_) {
    if (now - session.last_heard > limit) down.push_back(host);
  }
  if (down.empty()) return;
  end_host_sessions(down, now, HostEnd::kMissedHeartbeats);
}

// A host that went silent and one whose nodelet said it is stopping lose their session the same way: their
// leases are released and their jobs requeued; only what is recorded and logged tells the two apart.
void Coordinator::end_host_sessions(const std::vector<std::string>& down, double now, HostEnd how) {
  const bool stopped = how == HostEnd::kStopped;
  const std::string missed = "missed " + std::to_string(config_.heartbeat_lives) + " heartbeats";
  // If the transaction fails (disk full) nothing happened: the hosts keep their sessions, no stop goes out.
  std::map<std::string, HostSession> ended;
  struct RestoreOnFailure {
    std::map<std::string, HostSession>& sessions;
    std::map<std::string, HostSession>& ended;
    std::vector<Outgoing>& outbox;
    std::size_t outbox_size;
    bool committed = false;
    ~RestoreOnFailure() {
      if (committed) return;
      sessions.merge(ended);
      outbox.resize(std::min(outbox.size(), outbox_size));
    }
  } restore{sessions_, ended, outbox_, outbox_.size()};
  store::Database::Transaction tx(db_);
  std::set<std::int64_t> lost_leases;  // apps that held GPUs there: their launchers must learn it
  std::vector<LostRanks> lost_ranks;    // and the ranks they ran there, which will report no exit
  for (const auto& host : down) {
    if (stopped) spdlog::info("host {} stopped (its nodelet shut down); releasing its leases", host);
    else spdlog::warn("host {} missed {} heartbeats: down; releasing its leases", host, config_.heartbeat_lives);
    for (const auto app : hosts_.lease_holders_on(host)) lost_leases.insert(app);
    ended.insert(sessions_.extract(host));
    hosts_.mark_down(host);
    event(now, stopped ? "HostStopped" : "HostDown", std::nullopt, std::nullopt, host, std::nullopt,
          stopped ? "its nodelet shut down" : missed);
    const auto hit = hosts_.live_jobs_on(host);
    for (const auto& [app, job] : hit) {
      event(now, "NodeFail", app, job, host, std::nullopt, stopped ? "host stopped" : "host down");
      const auto stopping = job_exits_.stop_state(app, job);
      if (stopping.state == to_string(JobState::kStopping)) {
        states_.move_job(app, job, JobEvent::kStopped, std::nullopt, now, stopping.reason);
      } else {
        const std::int64_t attempt = stopping.attempt;
        if (has_launcher(app)) {
          lost_ranks.push_back(ranks_on_host(app, job, host));
          lost_ranks.back().why = stopped ? "host " + host + " stopped (its nodelet shut down)"
                                          : "host " + host + " was declared down (it " + missed + ")";
        }
        stop_job(app, job, now, "NodeFail");
        after_node_loss(app, job, attempt, "host " + host + (stopped ? " stopped (its nodelet shut down)" : " " + missed),
                        now);
      }
      // Its ranks on the lost host may still run: that nodelet SIGKILLs them by a deadline it derives from
      // the same heartbeat settings (net/fencing.h). The job waits it out before it is placed again.
      job_exits_.hold_retry_until(app, job, now + net::lost_host_hold_s(config_.heartbeat_interval_ms, config_.heartbeat_lives));
      finish_app_if_done(app, now);
    }
    // Leases of STARTING jobs not yet launched, or any left over, go too.
    lease_releases_.release_host(host, now, stopped ? "host stopped" : "host down");
  }
  tx.commit();
  restore.committed = true;
  for (const auto& [host, session] : ended) metrics_.add(loop_metrics::kHostDown, 1, {{"host", host}});
  // A launcher hears of its GPUs in grants. Without one here it would keep counting the lost host's GPUs
  // as its own, want no more, and (with no other app waiting) no round would ever correct it.
  // The grant first: a launcher that hears of the exits first would relaunch on a GPU it no longer holds.
  for (const auto app : lost_leases) send_grant(app, 0);
  for (const auto& lost : lost_ranks) forward_lost_ranks(lost);
  flush_outbox();
  trigger(stopped ? "host stopped" : "host down");
}

void Coordinator::on_nodelet_stopping(const std::string& routing_id, const Caller& caller, const net::InMessage& in) {
  const std::string host = host_of_routing(routing_id);
  net::OutMessage ack(in.request_id());
  if (host.empty() || (!config_.insecure && host != caller.name)) {
    ack.body().initAck().setMessage("no session for this connection");
    reply(routing_id, ack);
    return;
  }
  const std::string reason = in.envelope().getBody().getNodeletStopping().getReason();
  spdlog::info("host {} says its nodelet is stopping{}", host, reason.empty() ? "" : " (" + reason + ")");
  end_host_sessions({host}, env_->now(), HostEnd::kStopped);
  ack.body().initAck().setMessage("host stopped");
  reply(routing_id, ack);
}

// New connections are checked against the new list; established ones keep the identity they had.
void Coordinator::reload_authorized_keys() {
  if (!zap_) {
    spdlog::info("reload: insecure mode has no authorized keys");
    return;
  }
  try {
    enrol_launcher_keys();
    const auto count = net::read_authorized_keys(config_.authorized_keys).size();
    spdlog::info("reload: {} read, {} keys enrolled", config_.authorized_keys, count);
    event(env_->now(), "KeysReloaded", std::nullopt, std::nullopt, "", std::nullopt,
          config_.authorized_keys + ": " + std::to_string(count) + " keys");
  } catch (const std::exception& e) {
    spdlog::error("reload: {}; the keys in use are kept", e.what());
  }
}

void Coordinator::tick() {
  const double now = env_->now();
  {
    const PhaseTimer timer(turn_.other);
    if (reload_.exchange(false)) reload_authorized_keys();
    if (auto error = checkpointer_.last_error(); error != last_checkpoint_error_) {
      if (error.empty()) spdlog::info("database checkpoints work again");
      else spdlog::error("database checkpoint failed: {}; what was committed since the last one is not yet synced", error);
      last_checkpoint_error_ = std::move(error);
    }
  }
  {
    const PhaseTimer timer(turn_.heartbeats);
    check_heartbeats(now);
  }
  {
    const PhaseTimer timer(turn_.round);
    finish_auction();
  }
  {
    const PhaseTimer timer(turn_.other);
    // Leases reaching their expiry make their GPUs available to the next round.
    if (lease_releases_.expiring(now) > 0) trigger("lease expiry");
  }
  if (round_requested_at_ && (now - *round_requested_at_) * 1000.0 >= static_cast<double>(config_.round_batch_window_ms)) {
    const PhaseTimer timer(turn_.round);
    run_round(now);
    flush_outbox();
  }
  {
    const PhaseTimer timer(turn_.other);
    release_backoffs(now);
  }
  {
    const PhaseTimer timer(turn_.launches);
    launch_ready_jobs();
  }
  const PhaseTimer timer(turn_.other);
  supervise_launchers(now);
  flush_outbox();
}

}  // namespace themis::coordinator
