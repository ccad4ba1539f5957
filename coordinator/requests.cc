// Client requests: submit, cancel and the read-only queries behind themisctl.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "spec/app_spec.h"
#include "coordinator/coordinator.h"
#include "coordinator/explain.h"
#include "coordinator/store/history_store.h"
#include "coordinator/store/host_drain_store.h"

namespace themis::coordinator {

using nlohmann::json;

namespace {

constexpr const char* kLogHidden = "(hidden: only the app's owner and admins read its logs)";

// What another user must not read of an app (docs/admin.md): any line of its jobs' log tails, wherever a
// message quotes one (the explain verdict, failure reasons), and the failure events that quote older ones.
void hide_log_text(const std::vector<std::string>& log_tails, json& doc) {
  std::vector<std::string> lines;
  for (const auto& log_tail : log_tails) {
    std::istringstream tail(log_tail);
    for (std::string line; std::getline(tail, line);) {
      const auto first = line.find_first_not_of(" \t\r");
      if (first == std::string::npos) continue;
      line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
      if (line.size() > 200) lines.push_back(line.substr(0, 197));  // messages quote long lines cut to 197
      if (line.size() >= 4) lines.push_back(line);
    }
  }
  std::sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  const std::string hidden = kLogHidden;
  std::function<void(json&)> scrub = [&](json& node) {
    if (node.is_structured()) {
      for (auto& child : node) scrub(child);
      return;
    }
    if (!node.is_string()) return;
    auto text = node.get<std::string>();
    bool changed = false;
    for (const auto& line : lines) {
      for (auto at = text.find(line); at != std::string::npos; at = text.find(line, at + hidden.size())) {
        text.replace(at, line.size(), hidden);
        changed = true;
      }
    }
    if (changed) node = text;
  };
  scrub(doc);
  for (auto& event : doc["events"]) {
    if (event["kind"] == "FailureClassified") event["message"] = hidden;
  }
}

// A client-chosen idempotency key (docs/protocols/control.md, submit): bounded, and printable so that it can
// be quoted as it is in logs, events and error messages.
constexpr std::size_t kMaxSubmitTokenBytes = 128;

void check_submit_token(const std::string& token) {
  if (token.size() > kMaxSubmitTokenBytes) {
    throw bad_spec("submit token is " + std::to_string(token.size()) + " bytes; at most " +
                             std::to_string(kMaxSubmitTokenBytes) + " are allowed");
  }
  for (const char c : token) {
    if (c < '!' || c > '~') throw bad_spec("submit token must be printable ASCII without spaces");
  }
}

}  // namespace

void Coordinator::on_submit(const std::string& routing_id, const Caller& caller, const net::InMessage& in) {
  if (caller.role == net::Role::kNode) throw denied("node keys cannot submit apps");
  const auto submit = in.envelope().getBody().getSubmit();
  const std::string token = submit.getToken();
  check_submit_token(token);
  if (!token.empty()) {
    // A Submit whose (owner, token) already made an app is a retry whose answer was lost or late: it is
    // answered with that app and creates nothing. The same token with another spec is refused.
    if (const auto earlier = app_store_.app_of_token(caller.name, token)) {
      const std::int64_t app = earlier->app;
      if (earlier->spec != std::string(submit.getSpec())) {
        throw bad_spec("token " + token + " was already used by app " + std::to_string(app) +
                                 " with a different spec; choose a new token for a new app");
      }
      // Recorded once per app: a client retrying too fast must not turn every read-only answer into a commit.
      if (!app_store_.submit_repeat_recorded(app)) {
        store::Database::Transaction tx(db_);
        event(env_->now(), "SubmitRepeated", app, std::nullopt, "", std::nullopt,
              "token " + token + " sent again by " + net::to_string(caller.role) + ":" + caller.name +
                  "; answered with this app, nothing created (later repeats are answered the same, unrecorded)");
        tx.commit();
        spdlog::info("submit token {} from {} repeated: answered with app {} ({})", token, caller.name, app, earlier->name);
      }
      net::OutMessage out(in.request_id());
      auto submitted = out.body().initSubmitted();
      submitted.setApp(app);
      submitted.setName(earlier->name);
      submitted.setJobs(earlier->jobs);
      reply(routing_id, out);
      return;
    }
  }
  spec::AppSpec spec;
  try {
    spec = spec::parse_app_spec(submit.getSpec(), submit.getSpecName().size() ? std::string(submit.getSpecName()) : "spec");
  } catch (const std::invalid_argument& e) {
    throw bad_spec(e.what());
  }
  if (config_.reject_infeasible) {
    if (const auto why = infeasible_at_submit(spec.gpus_per_job)) {
      throw bad_spec((submit.getSpecName().size() ? std::string(submit.getSpecName()) : "spec") +
                     ": resources.gpus_per_job: " + *why + "; nothing was stored (the coordinator's reject_infeasible)");
    }
  }
  const double now = env_->now();
  std::int64_t app = 0;
  {
    store::Database::Transaction tx(db_);
    app = app_store_.insert_app({.name = spec.name,
                                 .owner = caller.name,
                                 .spec = std::string(submit.getSpec()),
                                 .gpus_per_job = static_cast<std::int64_t>(spec.gpus_per_job),
                                 .max_concurrent_jobs = static_cast<std::int64_t>(spec.max_concurrent_jobs),
                                 .workdir = spec.workdir,
                                 .env_json = json(spec.env).dump(),
                                 .checkpoint_dir = spec.checkpoint_dir,
                                 .grace_ms = static_cast<std::int64_t>(spec.grace_period_ms),
                                 .submitted_at = now,
                                 .submit_token = token.empty() ? std::optional<std::string>() : std::optional<std::string>(token)});
    for (const auto& job : spec.jobs) {
      std::vector<std::string> command;
      for (const auto& part : job.command) command.push_back(spec::expand_placeholders(part, app, job.index, job.hparams));
      app_store_.insert_job(app, static_cast<std::int64_t>(job.index), job.hparams_json, json(command).dump(), now);
    }
    if (wants_probe(app, spec.gpus_per_job, static_cast<int>(spec.jobs.size()), spec.max_concurrent_jobs)) {
      app_store_.mark_probe_waiting(app);
    }
    event(now, "Submitted", app, std::nullopt, "", std::nullopt,
          "by " + net::to_string(caller.role) + ":" + caller.name + ", " + std::to_string(spec.jobs.size()) + " jobs" +
              (token.empty() ? "" : ", token " + token));
    app_store_.set_admission(app, kAdmissionUndecided);
    admit_apps(now);
    tx.commit();
  }
  spdlog::info("app {} ({}) submitted by {} with {} jobs", app, spec.name, caller.name, spec.jobs.size());
  net::OutMessage out(in.request_id());
  auto submitted = out.body().initSubmitted();
  submitted.setApp(app);
  submitted.setName(spec.name);
  submitted.setJobs(static_cast<std::uint32_t>(spec.jobs.size()));
  reply(routing_id, out);
  trigger("app arrived");
}

void Coordinator::on_cancel(const std::string& routing_id, const Caller& caller, const net::InMessage& in) {
  const std::int64_t app = in.envelope().getBody().getCancel().getApp();
  const auto ownership = app_store_.ownership(app);
  if (!ownership) throw not_found("app " + std::to_string(app));
  const std::string owner = ownership->owner;
  if (caller.role != net::Role::kAdmin && caller.name != owner) {
    throw denied("app " + std::to_string(app) + " belongs to " + owner + "; only its owner or an admin may cancel it");
  }
  const double now = env_->now();
  {
    store::Database::Transaction tx(db_);
    for (const auto job : app_store_.cancellable_jobs(app)) stop_job(app, job, now, "Cancelled");
    event(now, "CancelRequested", app, std::nullopt, "", std::nullopt, "by " + caller.name);
    if (has_launcher(app)) {
      // A launcher app otherwise ends only when its launcher says so; a cancel ends it here, which also
      // stops its launcher (supervise_launchers) and frees its GPUs once the stopped workers are gone.
      lease_releases_.release_app(app, now, "app cancelled");
      if (states_.move_app(app, AppState::kCancelled, now)) {
        event(now, "AppCancelled", app, std::nullopt, "", std::nullopt, "cancelled by " + caller.name);
      }
    } else {
      finish_app_if_done(app, now);
    }
    tx.commit();
  }
  net::OutMessage out(in.request_id());
  out.body().initAck().setMessage("cancelling app " + std::to_string(app));
  reply(routing_id, out);
  trigger("app cancelled");
}

void Coordinator::on_drain(const std::string& routing_id, const Caller& caller, const net::InMessage& in) {
  if (caller.role != net::Role::kAdmin) throw denied("only admins drain hosts");
  const auto drain = in.envelope().getBody().getDrain();
  const std::string host = drain.getHost();
  const std::string reason = drain.getReason();
  if (reason.find_first_not_of(" \t") == std::string::npos) throw bad_spec("drain " + host + ": a reason is required (--reason)");
  if (reason.size() > 200) throw bad_spec("drain " + host + ": the reason is " + std::to_string(reason.size()) + " bytes; at most 200");
  const double now = env_->now();
  {
    store::Database::Transaction tx(db_);
    if (!store::drain_host(db_, host, reason, caller.name, now)) throw not_found("host " + host);
    event(now, "HostDrained", std::nullopt, std::nullopt, host, std::nullopt, "by " + caller.name + ": " + reason);
    tx.commit();
  }
  spdlog::info("host {} drained by {}: {}", host, caller.name, reason);
  net::OutMessage out(in.request_id());
  out.body().initAck().setMessage("draining " + host + ": no new leases; its leases end at their expiry");
  reply(routing_id, out);
  trigger("host drained");  // a lease of the host that already expired ends now
}

void Coordinator::on_resume(const std::string& routing_id, const Caller& caller, const net::InMessage& in) {
  if (caller.role != net::Role::kAdmin) throw denied("only admins resume hosts");
  const std::string host = in.envelope().getBody().getResume().getHost();
  const double now = env_->now();
  std::optional<std::string> was;
  {
    store::Database::Transaction tx(db_);
    bool known = false;
    was = store::resume_host(db_, host, &known);
    if (!known) throw not_found("host " + host);
    if (was) event(now, "HostResumed", std::nullopt, std::nullopt, host, std::nullopt, "by " + caller.name + " (was drained: " + *was + ")");
    tx.commit();
  }
  net::OutMessage out(in.request_id());
  out.body().initAck().setMessage(was ? "resumed " + host + ": its GPUs may be leased again" : host + " was not drained");
  reply(routing_id, out);
  if (was) trigger("host resumed");
}

void Coordinator::on_read_log(const std::string& routing_id, const Caller& caller, const net::InMessage& in) {
  if (caller.role == net::Role::kNode) throw denied("node keys cannot read logs");
  const auto r = in.envelope().getBody().getReadLog();
  const std::int64_t app = r.getApp(), job = r.getJob();
  const std::string name = std::to_string(app) + "_" + std::to_string(job);
  {
    const auto owner = log_relay_store_.app_owner(app);
    if (!owner) throw not_found("app " + std::to_string(app));
    // Logs only for the app's owner and admins (docs/admin.md, Keys and enrollment).
    if (caller.role != net::Role::kAdmin && *owner != caller.name) {
      throw denied("app " + std::to_string(app) + " belongs to " + *owner + "; only its owner or an admin reads its logs");
    }
  }
  std::uint32_t attempt = r.getAttempt();
  std::vector<GpuIndex> gpus;
  {
    const auto stored = log_relay_store_.latest_attempt(app, job);
    if (!stored) throw not_found("job " + name);
    const auto latest = stored->attempt;
    if (latest == 0) throw not_found("job " + name + " has not started yet, so it has no log");
    if (attempt == 0) attempt = latest;
    if (attempt > latest) throw not_found("job " + name + " attempt " + std::to_string(attempt) + " (its latest is " + std::to_string(latest) + ")");
    if (attempt == latest) gpus = json::parse(stored->placement_json).get<std::vector<GpuIndex>>();
  }
  // The attempt ended (its placement is cleared): the GPUs its last leases held, rank r on the r-th.
  if (gpus.empty()) gpus = log_relay_store_.last_lease_gpus(app, job);
  if (r.getRank() >= gpus.size()) throw not_found("rank " + std::to_string(r.getRank()) + " of job " + name + " attempt " + std::to_string(attempt));
  const std::string host = log_relay_store_.host_of_gpu(gpus[r.getRank()]);
  const auto session = sessions_.find(host);
  if (host.empty() || session == sessions_.end() || session->second.routing_id.empty()) {
    throw RequestError(wire::ErrorCode::INTERNAL, "the log of job " + name + " is on host " + (host.empty() ? "?" : host) +
                                                      ", which is not connected now");
  }
  const double now = env_->now();
  std::erase_if(log_relays_, [&](const auto& entry) { return entry.second.deadline < now; });
  if (log_relays_.size() >= kMaxLogRelays) throw RequestError(wire::ErrorCode::INTERNAL, "too many log reads in flight; try again");
  const std::uint64_t relay = next_log_relay_++;
  log_relays_[relay] = {routing_id, in.request_id(), app, job, attempt, host, now + kLogRelaySeconds};
  net::OutMessage out(next_request_id_++);
  auto forward = out.body().initReadLog();
  forward.setApp(app);
  forward.setJob(job);
  forward.setAttempt(attempt);
  forward.setRank(r.getRank());
  forward.setOffset(r.getOffset());
  forward.setMaxBytes(r.getMaxBytes());
  forward.setRelay(relay);
  send_to_host(host, out);
}

void Coordinator::on_log_chunk(const std::string& routing_id, const Caller& /*caller*/, const net::InMessage& in) {
  const auto chunk = in.envelope().getBody().getLogChunk();
  const auto it = log_relays_.find(chunk.getRelay());
  if (it == log_relays_.end()) return;  // its reader gave up
  const LogRelay relay = it->second;
  log_relays_.erase(it);
  if (host_of_routing(routing_id) != relay.host) return;  // only the host it was asked of answers it
  const bool ended = log_relay_store_.attempt_ended(relay.app, relay.job, relay.attempt);
  net::OutMessage out(relay.request_id);
  auto to_client = out.body().initLogChunk();
  to_client.setData(chunk.getData());
  to_client.setOffset(chunk.getOffset());
  to_client.setSize(chunk.getSize());
  to_client.setAttempt(relay.attempt);
  to_client.setHost(relay.host);
  to_client.setEnded(ended);
  to_client.setMissing(chunk.getMissing());
  reply(relay.client, out);
}

std::string Coordinator::progress_text(std::int64_t app, const std::string& state, const std::string& probe) const {
  if (const auto l = launchers_.find(app); l != launchers_.end() && l->second.iterations_planned > 0) {
    return std::to_string(l->second.iterations_done) + "/" + std::to_string(l->second.iterations_planned) + " " +
           (l->second.phase.empty() ? std::string("train") : l->second.phase);
  }
  if (state == "QUEUED") return "queued";
  if (state == "PENDING") return probe == "waiting" ? "probe wait" : "waiting";
  if (state == "RUNNING") return probe == "running" ? "probe" : "run";
  if (state == "COMPLETED") return "done";
  if (state == "FAILED") return "failed";
  if (state == "CANCELLED") return "cancelled";
  return state;
}

namespace {

// An app row of apps_rho as `apps` and `show` print it: REASON is explain's verdict (one function for both,
// list_reason), for an app that waits; the admission text moves to its own field.
void set_reason(json& item, store::Database& db, double now, double fairness_knob, arbiter::FilterRule filter) {
  item["admission"] = item["reason"];
  item["reason"] = nullptr;
  const std::string state = item["state"].get<std::string>();
  const bool waiting = state == "PENDING" || state == "QUEUED" || (state == "RUNNING" && item["jobs_pending"] != 0);
  if (!waiting) return;
  const auto why = list_reason(explain_app(db, item["app"].get<std::int64_t>(), now, fairness_knob, filter));
  if (!why.empty()) item["reason"] = why;
}

}  // namespace

void Coordinator::on_query(const std::string& routing_id, const Caller& caller, const net::InMessage& in) {
  const auto query = in.envelope().getBody().getQuery();
  const std::int64_t app = query.getApp();
  json doc = {{"apiVersion", "themis/v1"}};
  switch (query.getKind()) {
    case wire::QueryKind::APPS: {
      doc["kind"] = "AppList";
      doc["items"] = query_store_.apps_with_probe();
      const double now = env_->now();
      for (auto& item : doc["items"]) {
        const std::string state = item["state"].get<std::string>();
        set_reason(item, db_, now, config_.fairness_knob, config_.filter);
        item["progress"] = progress_text(item["app"].get<std::int64_t>(), state, item["probe"].is_string() ? item["probe"].get<std::string>() : "");
        item.erase("probe");
      }
      break;
    }
    case wire::QueryKind::NODES:
      doc["kind"] = "NodeList";
      doc["items"] = query_store_.gpu_utilisation();
      break;
    case wire::QueryKind::LEASES:
      doc["kind"] = "LeaseList";
      doc["items"] = query_store_.active_leases();
      break;
    case wire::QueryKind::ROUNDS:
      doc["kind"] = "RoundList";
      doc["items"] = query_store_.recent_rounds();
      break;
    case wire::QueryKind::HISTORY: {
      store::HistoryPeriod period;
      if (query.getSince() > 0) period.since = query.getSince();
      if (query.getUntil() > 0) period.until = query.getUntil();
      if (period.since && period.until && *period.until <= *period.since) {
        throw bad_spec("history: until must be later than since");
      }
      period.user = query.getUser();
      doc["kind"] = "History";
      doc["since"] = period.since ? json(*period.since) : json();
      doc["until"] = period.until ? json(*period.until) : json();
      doc["items"] = store::finished_apps(db_, period);
      doc["totals"] = store::user_totals(db_, period);
      break;
    }
    case wire::QueryKind::WHOAMI:
      doc["kind"] = "Identity";
      doc["principal"] = caller.name;
      doc["role"] = net::to_string(caller.role);
      break;
    case wire::QueryKind::APP:
    case wire::QueryKind::EXPLAIN: {
      auto apps = query_store_.app_row(app);
      if (apps.empty()) throw not_found("app " + std::to_string(app));
      doc["kind"] = query.getKind() == wire::QueryKind::APP ? "App" : "Explanation";
      set_reason(apps[0], db_, env_->now(), config_.fairness_knob, config_.filter);
      doc["app"] = apps[0];
      doc["jobs"] = query_store_.jobs_of_app(app);
      // Everyone may see an app, but its logs only its owner and admins (docs/admin.md, Keys and enrollment).
      if (caller.role != net::Role::kAdmin && apps[0]["owner"] != caller.name) {
        for (auto& job : doc["jobs"]) {
          if (!job["log_tail"].is_null()) job["log_tail"] = kLogHidden;
        }
      }
      doc["failures"] = query_store_.failures_of_app(app);
      if (caller.role != net::Role::kAdmin && apps[0]["owner"] != caller.name) {  // reasons quote the logs
        for (auto& f : doc["failures"]) {
          if (f["class"] != "preemption") f["reason"] = "(hidden: only the app's owner and admins read its logs)";
        }
        for (auto& job : doc["jobs"]) {
          if (job["failure"].is_string()) job["failure"] = job["failure"].get<std::string>().substr(0, job["failure"].get<std::string>().find(':'));
        }
      }
      doc["events"] = query_store_.events_of_app(app);
      if (query.getKind() == wire::QueryKind::EXPLAIN) {
        doc["verdict"] = explain_app(db_, app, env_->now(), config_.fairness_knob, config_.filter);
        // What the database cannot say: a launch this process holds back for its launcher's environment.
        for (const auto& [a, job, attempt] : awaiting_launch_env_) {
          if (a != app || launch_env_.count({a, job})) continue;
          doc["verdict"]["details"].push_back("Job " + std::to_string(a) + "_" + std::to_string(job) + " attempt " +
                                              std::to_string(attempt) + " waits for its launcher to send its launch again: "
                                              "the coordinator restarted after it was asked for, and the launch's "
                                              "environment is kept in memory only.");
        }
        doc["rounds"] = query_store_.bids_of_app(app);
        doc["active_apps"] = query_store_.active_apps_by_rho();
        doc["free_gpus"] = query_store_.free_gpus();
        const auto next_expiry = query_store_.next_lease_expiry();
        doc["next_expiry"] = next_expiry ? json(*next_expiry) : json();
      }
      if (caller.role != net::Role::kAdmin && apps[0]["owner"] != caller.name) hide_log_text(query_store_.log_tails_of_app(app), doc);
      break;
    }
  }
  net::OutMessage out(in.request_id());
  out.body().initQueryReply().setJson(doc.dump());
  reply(routing_id, out);
}

}  // namespace themis::coordinator
