#pragma once
// Endpoints as users type them: "tcp://sched01:7310", "sched01:7310" or "sched01" (the default port).
#include <string>

namespace themis::net {

inline constexpr int kDefaultCoordinatorPort = 7310;

// "host:port" and "host" become "tcp://host:port"; an endpoint with a scheme ("tcp://", "ipc://", ...) is
// returned unchanged. Throws std::invalid_argument naming the text for anything else (an empty host, a port
// that is not 1..65535).
std::string normalize_endpoint(const std::string& text, int default_port = kDefaultCoordinatorPort);

// "tcp://host:port" -> "host:port"; other endpoints unchanged.
std::string endpoint_address(const std::string& endpoint);

}  // namespace themis::net
