#pragma once
// The coordinator's HTTP endpoint (docs/admin.md "Metrics and dashboard"), on the server's own threads:
//   /metrics       Prometheus text: the loop's figures (coordinator/loop_metrics.h) and the database's
//   /              the read-only dashboard (coordinator/http/dashboard/, built into the binary)
//   /api/cluster   each GPU: its host, state, holder and lease expiry
//   /api/apps      apps with ρ, its history by round, and explain's verdict
//   /api/rounds    recent rounds with their explanation
// It never touches the loop's state: it reads the database through a read-only connection of its own
// and the loop's figures from a web::MetricsRegistry.
#include <memory>
#include <mutex>

#include "coordinator/config.h"
#include "coordinator/store/database.h"
#include "web/http_server.h"
#include "web/metrics_registry.h"

namespace themis::coordinator {

class CoordinatorHttp {
 public:
  // The database must exist (the coordinator creates it). Throws std::invalid_argument for a bad
  // http_listen; start() throws std::runtime_error when it cannot bind.
  CoordinatorHttp(const CoordinatorConfig& config, const web::MetricsRegistry& loop_metrics);
  void start();
  int port() const { return server_.port(); }

  // The bodies, callable without a server (tests).
  std::string metrics_text();
  std::string cluster_json();
  std::string apps_json();
  std::string rounds_json(int limit);

 private:
  CoordinatorConfig config_;
  const web::MetricsRegistry& loop_metrics_;
  std::mutex db_mutex_;  // one request reads at a time, in one snapshot
  store::Database db_;
  web::HttpServer server_;
};

}  // namespace themis::coordinator
