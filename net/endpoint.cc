#include "net/endpoint.h"

#include <stdexcept>

namespace themis::net {

std::string normalize_endpoint(const std::string& text, int default_port) {
  if (text.find("://") != std::string::npos) return text;
  const auto invalid = [&](const std::string& why) {
    return std::invalid_argument("'" + text + "' is not an endpoint (" + why +
                                 "); give host:port or tcp://host:port, e.g. sched01:7310");
  };
  std::string host = text;
  std::string port = std::to_string(default_port);
  // "[::1]:7310" and "[::1]": an IPv6 address in brackets; otherwise the last colon separates the port.
  const auto bracket = text.find(']');
  const auto colon = text.rfind(':');
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty()) throw invalid("no host");
  if (host.find(':') != std::string::npos && host.front() != '[') throw invalid("an IPv6 address needs brackets: [::1]:7310");
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) < 1 ||
      std::stoi(port) > 65535) {
    throw invalid("port '" + port + "' is not 1..65535");
  }
  return "tcp://" + host + ":" + port;
}

std::string endpoint_address(const std::string& endpoint) {
  return endpoint.rfind("tcp://", 0) == 0 ? endpoint.substr(6) : endpoint;
}

}  // namespace themis::net
