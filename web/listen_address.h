#pragma once
// The `http_listen` setting of the coordinator and the nodelet (docs/admin.md "Metrics and dashboard").
#include <string>

namespace themis::web {

struct ListenAddress {
  std::string host;       // an IP literal (IPv6 without brackets), or "localhost"
  int port = 0;           // 0: any free port
  bool loopback = true;   // 127.0.0.0/8, ::1 or localhost
};

// "127.0.0.1:9310", "[::1]:9310", "localhost:9310", or one interface's address ("10.0.0.5:9310"), which an
// admin writes on purpose to serve beyond the machine. A wildcard address (0.0.0.0, ::, *, or no host)
// and host names other than localhost are refused: the endpoint has no authentication, so it serves
// every interface only if someone names each. Throws std::invalid_argument "<setting>: reason".
ListenAddress parse_listen_address(const std::string& text, const std::string& setting);

}  // namespace themis::web
