#pragma once
// What the nodelet's loop reports to its HTTP endpoint, /metrics (docs/admin.md "Metrics and dashboard").
#include "web/metrics_registry.h"

namespace themis::nodelet::nodelet_metrics {

inline constexpr const char* kGpus = "themis_nodelet_gpus";
inline constexpr const char* kWorkers = "themis_nodelet_workers";
inline constexpr const char* kLaunchers = "themis_nodelet_launchers";
inline constexpr const char* kHeartbeatsSent = "themis_nodelet_heartbeats_sent_total";
inline constexpr const char* kRegistrationsSent = "themis_nodelet_registrations_sent_total";
inline constexpr const char* kConnected = "themis_nodelet_connected";
inline constexpr const char* kFenced = "themis_nodelet_fenced";
inline constexpr const char* kAnswerAge = "themis_nodelet_answer_age_seconds";

inline void declare(web::MetricsRegistry& registry) {
  registry.declare_gauge(kGpus, "GPUs this nodelet offers (its slots).");
  registry.declare_gauge(kWorkers, "Worker processes (ranks of jobs) this nodelet runs.");
  registry.declare_gauge(kLaunchers, "App launchers this nodelet runs for the coordinator.");
  registry.declare_counter(kHeartbeatsSent, "Heartbeats sent to the coordinator.");
  registry.declare_counter(kRegistrationsSent, "Registrations sent to the coordinator.");
  registry.declare_gauge(kConnected, "1 while registered and answered within the down bound, else 0.");
  registry.declare_gauge(kFenced, "1 while its workers are stopped for lack of answers from the coordinator.");
  registry.declare_gauge(kAnswerAge, "Seconds since the newest register or heartbeat the coordinator answered was sent "
                                     "(since the start until one is answered).");
}

}  // namespace themis::nodelet::nodelet_metrics
