#include "coordinator/loop_metrics.h"

namespace themis::coordinator::loop_metrics {

void declare(web::MetricsRegistry& registry) {
  const std::vector<double> seconds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
  registry.declare_counter(kRounds, "Rounds this coordinator process applied.");
  registry.declare_histogram(kRoundDuration, "A round from its start (offers) to its commit.", seconds);
  registry.declare_histogram(kAuctionDuration, "The winner determination of a round (its policy's solves), off the loop.",
                             seconds);
  registry.declare_gauge(kAuctionGap, "The last auction's proven relative optimality gap (0: proven optimal).");
  registry.declare_histogram(kLoopTurn, "One turn of the coordinator's loop: messages, heartbeat check, round, launches.",
                             seconds);
  registry.declare_gauge(kLoopWorst, "The longest turn of the coordinator's loop between the last two rounds.");
  registry.declare_gauge(kHostLastHeartbeat, "When the coordinator last heard from the host (register or heartbeat).",
                         {"host"});
  registry.declare_counter(kHostDown, "Times the host was declared down for missing heartbeat_lives heartbeats in a row.",
                           {"host"});
}

}  // namespace themis::coordinator::loop_metrics
