#include "coordinator/http/coordinator_http.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "coordinator/coordinator.h"
#include "coordinator/explain.h"
#include "coordinator/loop_metrics.h"
#include "coordinator/store/dashboard_store.h"
#include "web/embedded_file.h"

namespace themis::coordinator::http {
const std::vector<web::EmbeddedFile>& dashboard_files();  // generated from coordinator/http/dashboard/
}  // namespace themis::coordinator::http

namespace themis::coordinator {

using nlohmann::json;

namespace {

constexpr int kFinishedAppsShown = 20;
constexpr int kRhoHistoryRounds = 200;
constexpr int kRoundsShown = 20;

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json optional_json(const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); }

const char* gpu_state(const store::GpuView& g) {
  if (g.host_state != "up") return "down";
  if (!g.app) return "free";
  return g.in_use ? "leased" : "idle";
}

web::HttpResponse json_response(const std::string& body) { return {200, "application/json", body}; }

}  // namespace

CoordinatorHttp::CoordinatorHttp(const CoordinatorConfig& config, const web::MetricsRegistry& loop_metrics)
    : config_(config),
      loop_metrics_(loop_metrics),
      db_(config.database, /*read_only=*/true),
      server_(web::parse_listen_address(config.http_listen, "coordinator.http_listen")) {
  server_.get("/metrics", [this](const web::HttpRequest&) {
    return web::HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", metrics_text()};
  });
  server_.get("/api/cluster", [this](const web::HttpRequest&) { return json_response(cluster_json()); });
  server_.get("/api/apps", [this](const web::HttpRequest&) { return json_response(apps_json()); });
  server_.get("/api/rounds", [this](const web::HttpRequest& request) {
    int limit = kRoundsShown;
    try {
      limit = std::clamp(std::stoi(request.param("limit", std::to_string(kRoundsShown))), 1, 1000);
    } catch (const std::exception&) {
      return web::HttpResponse{400, "text/plain; charset=utf-8", "limit: must be a number in 1..1000\n"};
    }
    return json_response(rounds_json(limit));
  });
  for (const web::EmbeddedFile& file : http::dashboard_files()) {
    const web::HttpResponse response{200, std::string(file.content_type), std::string(file.body)};
    server_.get(std::string(file.path), [response](const web::HttpRequest&) { return response; });
    if (file.path == "/index.html") server_.get("/", [response](const web::HttpRequest&) { return response; });
  }
}

void CoordinatorHttp::start() {
  server_.start();
  const auto& address = server_.address();
  spdlog::info("http: /metrics and the dashboard on http://{}:{}/", address.host.find(':') != std::string::npos
                                                                          ? "[" + address.host + "]" : address.host,
               server_.port());
  if (!address.loopback) {
    spdlog::warn("http: {} is not a loopback address: anyone who reaches it sees the cluster (no authentication)",
                 address.host);
  }
}

std::string CoordinatorHttp::metrics_text() {
  web::MetricsRegistry scraped;
  scraped.declare_gauge("themis_gpus", "GPUs registered, by state: leased (a job runs there), idle (leased, no job "
                                       "placed yet), free (no lease), down (its host is down).", {"state"});
  scraped.declare_gauge("themis_hosts", "Hosts registered, by state.", {"state"});
  scraped.declare_gauge("themis_apps", "Apps by state (QUEUED: waiting for admission).", {"state"});
  scraped.declare_gauge("themis_jobs", "Jobs by state.", {"state"});
  scraped.declare_gauge("themis_app_rho", "Finish-time fairness ρ of each active app, as of the last round.",
                        {"app", "name"});
  scraped.declare_gauge("themis_app_gpus", "GPUs each active app holds leases on.", {"app", "name"});
  scraped.declare_gauge("themis_leases_active", "Active leases.");
  scraped.declare_counter("themis_leases_total", "Leases written: each grant and each renewal.");
  scraped.declare_gauge("themis_host_missed_heartbeats",
                        "Heartbeat intervals since the coordinator last heard from the host (0 while it beats).",
                        {"host"});
  {
    const std::lock_guard lock(db_mutex_);
    const store::Database::ReadSnapshot snapshot(db_);
    store::DashboardStore store(db_);
    const store::ClusterCounts c = store.counts();
    for (const auto& [state, n] : c.gpus) scraped.set("themis_gpus", static_cast<double>(n), {{"state", state}});
    for (const auto& [state, n] : c.hosts) scraped.set("themis_hosts", static_cast<double>(n), {{"state", state}});
    for (const auto& [state, n] : c.apps) scraped.set("themis_apps", static_cast<double>(n), {{"state", state}});
    for (const auto& [state, n] : c.jobs) scraped.set("themis_jobs", static_cast<double>(n), {{"state", state}});
    scraped.set("themis_leases_active", static_cast<double>(c.leases_active));
    scraped.add("themis_leases_total", static_cast<double>(c.leases_granted));
    for (const store::AppView& a : store.apps(0)) {
      const web::Labels labels = {{"app", std::to_string(a.id)}, {"name", a.name}};
      if (a.rho) scraped.set("themis_app_rho", *a.rho, labels);
      scraped.set("themis_app_gpus", static_cast<double>(a.gpus_held), labels);
    }
  }
  const double now = unix_now();
  const double interval = static_cast<double>(config_.heartbeat_interval_ms) / 1000.0;
  for (const auto& [labels, last] : loop_metrics_.series(loop_metrics::kHostLastHeartbeat)) {
    scraped.set("themis_host_missed_heartbeats", std::max(0.0, std::floor((now - last) / interval)), labels);
  }
  return loop_metrics_.render() + scraped.render();
}

std::string CoordinatorHttp::cluster_json() {
  const std::lock_guard lock(db_mutex_);
  const store::Database::ReadSnapshot snapshot(db_);
  json hosts = json::array(), gpus = json::array();
  std::string last_host;
  for (const store::GpuView& g : store::DashboardStore(db_).gpus()) {
    if (g.host != last_host) {
      hosts.push_back({{"name", g.host}, {"rack", g.rack}, {"state", g.host_state}});
      last_host = g.host;
    }
    gpus.push_back({{"gpu", g.gpu}, {"host", g.host}, {"local_index", g.local_index}, {"state", gpu_state(g)},
                    {"app", optional_json(g.app)}, {"app_name", g.app ? json(g.app_name) : json(nullptr)},
                    {"job", optional_json(g.job)}, {"lease_expiry", optional_json(g.lease_expiry)}});
  }
  return json{{"now", unix_now()}, {"hosts", hosts}, {"gpus", gpus}}.dump();
}

std::string CoordinatorHttp::apps_json() {
  const std::lock_guard lock(db_mutex_);
  const store::Database::ReadSnapshot snapshot(db_);
  store::DashboardStore store(db_);
  const auto history = store.rho_history(kRhoHistoryRounds);
  const double now = unix_now();
  json apps = json::array();
  for (const store::AppView& a : store.apps(kFinishedAppsShown)) {
    json points = json::array();
    if (const auto it = history.find(a.id); it != history.end()) {
      for (const store::RhoPoint& p : it->second) points.push_back({{"round", p.round}, {"at", p.at}, {"rho", p.rho}});
    }
    json verdict;
    try {
      const json v = explain_app(db_, a.id, now, config_.fairness_knob, config_.filter);
      verdict = {{"reason", v["reason"]}, {"headline", v["headline"]}, {"details", v["details"]}};
    } catch (const std::exception& e) {
      verdict = {{"reason", ""}, {"headline", ""}, {"details", json::array()}, {"error", e.what()}};
    }
    apps.push_back({{"id", a.id}, {"name", a.name}, {"owner", a.owner}, {"state", a.state}, {"rho", optional_json(a.rho)},
                    {"gpus_held", a.gpus_held}, {"jobs", a.jobs}, {"jobs_running", a.jobs_running},
                    {"jobs_pending", a.jobs_pending}, {"submitted_at", a.submitted_at}, {"rho_history", points},
                    {"explain", verdict}});
  }
  return json{{"now", now}, {"apps", apps}}.dump();
}

std::string CoordinatorHttp::rounds_json(int limit) {
  const std::lock_guard lock(db_mutex_);
  const store::Database::ReadSnapshot snapshot(db_);
  json rounds = json::array();
  for (const store::RoundView& r : store::DashboardStore(db_).recent_rounds(limit)) {
    const json text = explain_round(db_, r.id, config_.fairness_knob, config_.filter);
    rounds.push_back({{"id", r.id}, {"started_at", r.started_at}, {"finished_at", r.finished_at}, {"trigger", r.trigger},
                      {"policy", r.policy}, {"free_gpus", r.free_gpus}, {"apps", r.apps}, {"granted", r.granted},
                      {"idle", r.idle}, {"auction_seconds", optional_json(r.auction_seconds)}, {"gap", optional_json(r.gap)},
                      {"worst_loop_lag_ms", optional_json(r.worst_loop_lag_ms)}, {"headline", text["headline"]},
                      {"details", text["details"]}});
  }
  return json{{"now", unix_now()}, {"rounds", rounds}}.dump();
}

}  // namespace themis::coordinator
