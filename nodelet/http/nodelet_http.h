#pragma once
// The nodelet's HTTP endpoint: /metrics (nodelet/nodelet_metrics.h) in the Prometheus text format, served on
// the server's own threads from the registry the loop updates (docs/admin.md "Metrics and dashboard").
#include <memory>

#include "nodelet/nodelet.h"
#include "web/http_server.h"
#include "web/metrics_registry.h"

namespace themis::nodelet {

// Binds config.http_listen and serves until the returned server is destroyed; throws when it cannot.
std::unique_ptr<web::HttpServer> start_nodelet_http(const NodeletConfig& config, const web::MetricsRegistry& metrics);

}  // namespace themis::nodelet
