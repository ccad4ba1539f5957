#pragma once
// What the coordinator's loop reports to its HTTP endpoint (docs/admin.md "Metrics and dashboard"): the
// loop updates these in a web::MetricsRegistry; the HTTP server's thread renders them with the figures it
// reads from the database itself.
#include "web/metrics_registry.h"

namespace themis::coordinator::loop_metrics {

inline constexpr const char* kRounds = "themis_rounds_total";
inline constexpr const char* kRoundDuration = "themis_round_duration_seconds";
inline constexpr const char* kAuctionDuration = "themis_auction_duration_seconds";
inline constexpr const char* kAuctionGap = "themis_auction_gap_ratio";
inline constexpr const char* kLoopTurn = "themis_loop_turn_duration_seconds";
inline constexpr const char* kLoopWorst = "themis_loop_turn_worst_seconds";
inline constexpr const char* kHostLastHeartbeat = "themis_host_last_heartbeat_timestamp_seconds";
inline constexpr const char* kHostDown = "themis_host_declared_down_total";

void declare(web::MetricsRegistry& registry);

}  // namespace themis::coordinator::loop_metrics
