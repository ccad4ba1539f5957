#include "launcher/daemon.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "launcher/launch_spec.h"
#include "net/curve_keys.h"
#include "net/socket_security.h"

namespace themis::launcher {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

// The reports endpoint workers connect to: the bound one, with its host replaced when asked.
std::string advertised(const std::string& bound, const std::string& address) {
  if (address.empty()) return bound;
  const auto colon = bound.rfind(':');
  return "tcp://" + address + bound.substr(colon);
}

}  // namespace

LauncherDaemon::LauncherDaemon(const DaemonOptions& options)
    : options_(options), context_(1), dealer_(context_, zmq::socket_type::dealer) {
  if (options.app <= 0) throw std::invalid_argument("--app: must be a positive app id");
  if (options.insecure) {
    if (!net::is_loopback_endpoint(options.coordinator)) {
      throw std::invalid_argument("--insecure only connects to loopback endpoints, not " + options.coordinator);
    }
    if (!net::is_loopback_endpoint(options.report_bind)) {
      throw std::invalid_argument("--insecure: reports must bind a loopback endpoint, not " + options.report_bind);
    }
  } else {
    if (options.key.empty() || options.server_key.empty()) {
      throw std::invalid_argument("need --key and --server-key (CURVE), or --insecure for a loopback coordinator");
    }
    const auto own = net::read_certificate(options.key);
    if (own.secret_key.empty()) throw std::invalid_argument(options.key + ": not a secret certificate (.key_secret)");
    net::make_curve_client(dealer_, own, net::read_certificate(options.server_key).public_key);
  }
  dealer_.set(zmq::sockopt::linger, 1000);
  dealer_.connect(options.coordinator);
  std::function<void(zmq::socket_t&)> secure_reports;
  if (!options.insecure) {
    report_security_ = std::make_unique<ReportSecurity>(context_);
    secure_reports = [this](zmq::socket_t& pull) { report_security_->secure(pull); };
    report_env_ = report_security_->worker_env();
  }
  reports_ = std::make_unique<ReportReceiver>(context_, options.report_bind, secure_reports);
  report_endpoint_ = advertised(reports_->endpoint(), options.report_address);
  report_env_["THEMIS_REPORT_ENDPOINT"] = report_endpoint_;
}

LauncherDaemon::~LauncherDaemon() = default;

void LauncherDaemon::send(net::OutMessage& message) {
  auto frame = message.to_frame();
  dealer_.send(frame, zmq::send_flags::dontwait);
}

void LauncherDaemon::attach() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.attach_timeout_ms);
  while (!stop_) {
    net::OutMessage out(request_id_++);
    auto attach_msg = out.body().initAttach();
    attach_msg.setApp(options_.app);
    attach_msg.setGeneration(options_.generation);
    send(out);
    const auto resend = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!stop_ && std::chrono::steady_clock::now() < resend) {
      zmq::pollitem_t item{dealer_.handle(), 0, ZMQ_POLLIN, 0};
      try {
        zmq::poll(&item, 1, std::chrono::milliseconds(100));
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        throw;
      }
      if (!(item.revents & ZMQ_POLLIN)) continue;
      zmq::message_t frame;
      if (!dealer_.recv(frame, zmq::recv_flags::dontwait)) continue;
      wire::ErrorCode code{};
      std::string error;
      auto in = net::InMessage::parse(frame, &code, &error);
      if (!in) continue;
      if (in->which() == wire::Envelope::Body::Which::ERROR) {
        const auto e = in->envelope().getBody().getError();
        throw std::runtime_error("attach to app " + std::to_string(options_.app) + " refused: " +
                                 std::string(e.getMessage().cStr()));
      }
      if (in->which() != wire::Envelope::Body::Which::ATTACHED) continue;
      const auto attached = in->envelope().getBody().getAttached();
      ClusterSpec spec;
      spec.name = "themis";
      for (const auto host : attached.getHosts()) {
        ClusterSpec::MachineSpec machine{host.getName(), host.getRack(), {}};
        for (const auto n : host.getGpusPerSlot()) machine.gpus_per_slot.push_back(static_cast<int>(n));
        spec.machines.push_back(std::move(machine));
      }
      int gpus = 0;
      for (const auto& m : spec.machines) {
        for (const int n : m.gpus_per_slot) gpus += n;
      }
      if (session_ && gpus == cluster_.size()) {
        // The same process attaching again (the coordinator restarted): its jobs and state are its own. A
        // launch the coordinator had not yet sent to its hosts lost the environment it keeps in memory only
        // (the ranks' report keys); sending the launch again gives it back.
        spdlog::info("attached again to app {}", options_.app);
        for (const auto job : attached.getJobs()) {
          if (std::string(job.getState()) != "STARTING") continue;
          const auto launch = session_->launch_of(static_cast<int>(job.getJob()), static_cast<int>(job.getAttempt()));
          if (!launch) continue;
          send_launch(*launch);
          spdlog::info("job {} attempt {}: sent its launch again (the coordinator restarted before it went out)",
                       launch->job, launch->attempt);
        }
        return;
      }
      cluster_ = Cluster(spec);
      const std::string name = attached.getName();
      std::vector<std::map<std::string, std::string>> hparams;
      for (const auto job : attached.getJobs()) {
        // Values as the spec typed them (numbers, booleans, strings); kept as text until the launch.
        const auto json = nlohmann::json::parse(std::string(job.getHparams()));
        std::map<std::string, std::string> texts;
        for (const auto& [key, value] : json.items()) texts[key] = value.is_string() ? value.get<std::string>() : value.dump();
        hparams.push_back(std::move(texts));
      }
      const auto launch_spec = parse_launch_spec(attached.getSpec(), name + ".toml", static_cast<int>(hparams.size()));
      AgentConfig config;
      config.app = options_.app;
      config.scheduler = launch_spec.scheduler;
      config.gpus_per_job = static_cast<int>(attached.getGpusPerJob());
      config.max_concurrent_jobs = static_cast<int>(attached.getMaxConcurrentJobs());
      config.max_restarts = launch_spec.max_restarts;
      config.lease_seconds = attached.getLeaseMs() / 1000.0;
      config.default_serial_iter_time = launch_spec.serial_iter_time;
      config.slowdown_priors = launch_spec.slowdown_priors;
      session_ = std::make_unique<AppSession>(cluster_, config, std::move(hparams), report_env_,
                                              attached.getSubmittedAt(), static_cast<int>(attached.getActiveApps()));
      for (const auto job : attached.getJobs()) {
        session_->restore_attempt(static_cast<int>(job.getJob()), static_cast<int>(job.getAttempt()));
      }
      if (attached.getLauncherState().size() > 0) {
        try {
          session_->restore_state(attached.getLauncherState());
        } catch (const std::invalid_argument& e) {
          spdlog::warn("{}; starting the scheduler afresh", e.what());
        }
      }
      // Jobs an earlier launcher of the app left running report to that launcher's (gone) socket: stop
      // them with a checkpoint; they resume from it under this launcher.
      for (const auto job : attached.getJobs()) {
        const std::string state = job.getState();
        if (state != "STARTING" && state != "RUNNING") continue;
        net::OutMessage stop(request_id_++);
        auto msg = stop.body().initStopJob();
        msg.setApp(options_.app);
        msg.setJob(job.getJob());
        msg.setAttempt(job.getAttempt());
        msg.setReason("LauncherRestarted");
        send(stop);
        spdlog::info("job {} attempt {}: left running by an earlier launcher; stopping it to resume from its checkpoint",
                     job.getJob(), job.getAttempt());
      }
      spdlog::info("attached to app {} ({}): {} jobs, {} scheduler, {} GPUs per job, cluster of {} GPUs; reports on {}{}",
                   options_.app, name, config.scheduler.jobs, to_string(config.scheduler.kind), config.gpus_per_job,
                   cluster_.size(), report_endpoint_,
                   report_security_ ? " (CURVE: only this launcher's workers)" : " (insecure mode: loopback only)");
      return;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("no answer from " + options_.coordinator + " to attach (unreachable, or the key is not enrolled)");
    }
  }
}

void LauncherDaemon::handle(const net::InMessage& in, double now) {
  using W = wire::Envelope::Body::Which;
  const auto body = in.envelope().getBody();
  switch (in.which()) {
    case W::OFFER: {
      const auto offer_msg = body.getOffer();
      Offer offer{offer_msg.getRound(), {}};
      bool known = true;
      for (const auto g : offer_msg.getGpus()) {
        if (g < 0 || g >= cluster_.size()) known = false;
        offer.gpus.push_back(g);
      }
      std::sort(offer.gpus.begin(), offer.gpus.end());
      net::OutMessage out(in.request_id());
      auto bid_msg = out.body().initBid();
      bid_msg.setApp(options_.app);
      bid_msg.setRound(offer.round);
      if (!known) {
        spdlog::warn("offer of round {} names GPUs beyond the {} known: no bid; attaching again", offer.round, cluster_.size());
        bid_msg.setRhoNoNew(1.0);
        send(out);
        attach();
        return;
      }
      const Bid bid = session_->on_offer(offer, static_cast<int>(offer_msg.getActiveApps()), now);
      bid_msg.setRhoNoNew(bid.rho_no_new);
      auto rows = bid_msg.initRows(static_cast<unsigned>(bid.rows.size()));
      for (std::size_t r = 0; r < bid.rows.size(); ++r) {
        rows[static_cast<unsigned>(r)].setRho(bid.rows[r].rho);
        rows[static_cast<unsigned>(r)].setScope(static_cast<std::uint8_t>(bid.rows[r].scope));
        auto gpus = rows[static_cast<unsigned>(r)].initGpus(static_cast<unsigned>(bid.rows[r].gpus.size()));
        for (std::size_t g = 0; g < bid.rows[r].gpus.size(); ++g) gpus.set(static_cast<unsigned>(g), bid.rows[r].gpus[g]);
      }
      send(out);
      spdlog::info("round {}: offered {} GPUs, bid {} rows, rho_no_new {:.3f}", offer.round, offer.gpus.size(),
                   bid.rows.size(), bid.rho_no_new);
      break;
    }
    case W::GRANT: {
      const auto grant = body.getGrant();
      // Expiries on this process's clock: a lease has (expiry - sentAt) left as the grant arrives, whatever
      // the skew between this host's clock and the coordinator's (an older coordinator sends no sentAt).
      const double to_local = grant.getSentAt() > 0 ? now - grant.getSentAt() : 0;
      std::vector<HeldLease> held;
      lease_ids_.clear();
      for (const auto lease : grant.getLeases()) {
        held.push_back({lease.getGpu(), lease.getExpiry() + to_local});
        if (lease.getId() > 0) lease_ids_[lease.getGpu()] = lease.getId();
      }
      const bool probe = grant.getProbe();
      // Round 0: leases sent outside a round (attach, a give-back, a lost lease, the probe's end).
      const std::string when = grant.getRound() > 0 ? "round " + std::to_string(grant.getRound()) : "leases changed";
      spdlog::info("{}: holding {} GPUs{}", when, held.size(), probe ? " for the app's probe (one job on one GPU)" : "");
      session_->on_held_leases(held, now, probe);
      break;
    }
    case W::EXITED: {
      const auto e = body.getExited();
      session_->on_rank_exit(static_cast<int>(e.getJob()), static_cast<int>(e.getAttempt()), static_cast<int>(e.getRank()),
                             e.getExitCode(), e.getSignal(), e.getStopOrdered(), now);
      break;
    }
    case W::ERROR: {
      const auto e = body.getError();
      // A stale grant is a race with a lease's end, not a fault: the job waits for the next grant.
      if (e.getCode() == wire::ErrorCode::STALE_GRANT) spdlog::info("coordinator: {}", e.getMessage().cStr());
      else spdlog::warn("coordinator: {}", e.getMessage().cStr());
      if (const auto it = launch_requests_.find(in.request_id()); it != launch_requests_.end()) {
        session_->on_launch_refused(it->second.first, it->second.second, e.getMessage().cStr());
        launch_requests_.erase(it);
        break;
      }
      if (e.getCode() == wire::ErrorCode::NOT_FOUND || e.getCode() == wire::ErrorCode::NOT_REGISTERED) attach();
      break;
    }
    case W::ACK:
      launch_requests_.erase(in.request_id());
      break;
    case W::APP_STATUS_ACK: {
      const auto ack = body.getAppStatusAck();
      session_->on_contention(static_cast<int>(std::max<std::uint32_t>(1, ack.getActiveApps())), ack.getContentionAhead(), now);
      break;
    }
    case W::ATTACHED:
      break;
    default:
      spdlog::warn("unexpected '{}' from the coordinator", net::body_name(in.which()));
  }
}

void LauncherDaemon::flush_commands(double now) {
  for (const auto& note : session_->take_notes()) spdlog::info("{}", note);
  for (const auto& stop : session_->take_stops()) {
    net::OutMessage out(request_id_++);
    auto msg = out.body().initStopJob();
    msg.setApp(options_.app);
    msg.setJob(stop.job);
    msg.setAttempt(static_cast<std::uint32_t>(stop.attempt));
    msg.setReason(stop.reason);
    send(out);
    spdlog::info("job {} attempt {}: stop ({})", stop.job, stop.attempt, stop.reason);
  }
  for (const int job : session_->take_stopped_early()) {
    net::OutMessage out(request_id_++);
    auto msg = out.body().initStopJob();
    msg.setApp(options_.app);
    msg.setJob(job);
    msg.setAttempt(0);
    msg.setReason("EarlyStopped");
    send(out);
    spdlog::info("job {}: stopped early by successive halving", job);
  }
  for (const auto& launch : session_->take_launches(now)) {
    send_launch(launch);
    spdlog::info("job {} attempt {}: launch on GPUs {}", launch.job, launch.attempt, nlohmann::json(launch.gpus).dump());
  }
  send_status(now, false);
}

void LauncherDaemon::send_launch(const JobLaunch& launch) {
  launch_requests_[request_id_] = {launch.job, launch.attempt};
  net::OutMessage out(request_id_++);
  auto msg = out.body().initLaunchJob();
  msg.setApp(options_.app);
  msg.setJob(launch.job);
  msg.setAttempt(static_cast<std::uint32_t>(launch.attempt));
  auto gpus = msg.initGpus(static_cast<unsigned>(launch.gpus.size()));
  for (std::size_t g = 0; g < launch.gpus.size(); ++g) gpus.set(static_cast<unsigned>(g), launch.gpus[g]);
  // The leases it acts on, so that a launch arriving after one of them ended is told so (staleGrant).
  if (std::all_of(launch.gpus.begin(), launch.gpus.end(), [&](GpuIndex g) { return lease_ids_.count(g) > 0; })) {
    auto leases = msg.initLeases(static_cast<unsigned>(launch.gpus.size()));
    for (std::size_t g = 0; g < launch.gpus.size(); ++g) leases.set(static_cast<unsigned>(g), lease_ids_.at(launch.gpus[g]));
  }
  auto env = msg.initEnv(static_cast<unsigned>(launch.env.size()));
  unsigned i = 0;
  for (const auto& [name, value] : launch.env) {
    env[i].setName(name);
    env[i++].setValue(value);
  }
  send(out);
}

void LauncherDaemon::send_status(double now, bool force) {
  const auto status = session_->status(now);
  const bool due = (now - last_status_) * 1000.0 >= options_.status_interval_ms;
  const std::string state = session_->saved_state();
  std::string released;
  for (GpuIndex g : status.release) released += (released.empty() ? "" : ", ") + std::to_string(g);
  // Whether it has progress at all is part of the key: the first iteration goes out at once, since the
  // coordinator passes the app's probe on it (docs/reliability.md, "Probe") and the app's other jobs wait for that.
  const std::string key = status.summary + "/" + std::to_string(status.demand) + "/" + state + "/" + released + "/" +
                          (status.progress > 0 ? "progress" : "none");
  if (!force && !due && key == last_status_text_) return;
  last_status_ = now;
  last_status_text_ = key;
  net::OutMessage out(request_id_++);
  auto msg = out.body().initAppStatus();
  msg.setApp(options_.app);
  msg.setRho(status.rho);
  msg.setProgress(status.progress);
  msg.setFinished(status.finished);
  msg.setFailed(status.failed);
  msg.setBestLoss(status.best_loss ? *status.best_loss : std::nan(""));
  msg.setDemand(static_cast<std::uint32_t>(status.demand));
  msg.setSummary(status.summary);
  msg.setState(state);
  msg.setIterationsDone(status.iterations_done);
  msg.setIterationsPlanned(status.iterations_planned);
  msg.setPhase(status.phase);
  if (std::isfinite(status.remaining) && status.remaining > 0) msg.setRemaining(status.remaining);
  auto release = msg.initRelease(static_cast<unsigned>(status.release.size()));
  for (std::size_t i = 0; i < status.release.size(); ++i) release.set(static_cast<unsigned>(i), status.release[i]);
  auto slowdowns = msg.initSlowdowns(static_cast<unsigned>(status.slowdowns.size()));
  for (std::size_t i = 0; i < status.slowdowns.size(); ++i) slowdowns.set(static_cast<unsigned>(i), status.slowdowns[i]);
  if (released != last_released_) {
    last_released_ = released;
    if (!released.empty()) spdlog::info("giving back GPUs [{}]: no job runs on them and none waits to start", released);
  }
  send(out);
  // Sent: they are the coordinator's again, so no job of this app may launch there meanwhile.
  if (!status.release.empty()) session_->on_released(status.release);
}

int LauncherDaemon::run() {
  attach();
  while (!stop_) {
    zmq::pollitem_t items[] = {{dealer_.handle(), 0, ZMQ_POLLIN, 0}, {reports_->socket().handle(), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 2, std::chrono::milliseconds(100));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      throw;
    }
    const double now = unix_now();
    reports_->drain([&](std::string_view line) { session_->on_report_line(line, now); });
    for (int i = 0; i < 1000; ++i) {
      zmq::message_t frame;
      if (!dealer_.recv(frame, zmq::recv_flags::dontwait)) break;
      wire::ErrorCode code{};
      std::string error;
      auto in = net::InMessage::parse(frame, &code, &error);
      if (!in) {
        spdlog::warn("bad message from the coordinator: {}", error);
        continue;
      }
      handle(*in, now);
    }
    flush_commands(now);
    const auto status = session_->status(now);
    if (status.finished || status.failed) {
      send_status(now, true);
      spdlog::info("app {} {}: rho {:.3f}, best loss {}", options_.app, status.finished ? "finished" : "failed", status.rho,
                   status.best_loss ? std::to_string(*status.best_loss) : "none");
      return status.finished ? 0 : 1;
    }
  }
  return 0;
}

}  // namespace themis::launcher
