#include "nodelet/http/nodelet_http.h"

#include <spdlog/spdlog.h>

namespace themis::nodelet {

std::unique_ptr<web::HttpServer> start_nodelet_http(const NodeletConfig& config, const web::MetricsRegistry& metrics) {
  auto server = std::make_unique<web::HttpServer>(web::parse_listen_address(config.http_listen, "nodelet.http_listen"));
  server->get("/metrics", [&metrics](const web::HttpRequest&) {
    return web::HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", metrics.render()};
  });
  server->get("/", [](const web::HttpRequest&) {
    return web::HttpResponse{200, "text/plain; charset=utf-8",
                             "themis-nodelet: /metrics (Prometheus); the dashboard is on the coordinator\n"};
  });
  server->start();
  spdlog::info("http: /metrics on {}:{}", config.http_listen.substr(0, config.http_listen.rfind(':')), server->port());
  if (!server->address().loopback) {
    spdlog::warn("http: {} is not a loopback address: anyone who reaches it sees this node's metrics",
                 server->address().host);
  }
  return server;
}

}  // namespace themis::nodelet
