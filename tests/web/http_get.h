#pragma once
// A plain HTTP/1.1 client over a loopback socket for tests: any method, any Host header.
#include <string>

namespace themis::testing {

struct HttpReply {
  int status = 0;          // 0: no answer (nothing listens, or the connection failed)
  std::string headers;     // the header block, as sent
  std::string body;
};

HttpReply http_request(int port, const std::string& method, const std::string& path,
                       const std::string& host_header = "127.0.0.1");
inline HttpReply http_get(int port, const std::string& path) { return http_request(port, "GET", path); }

// A TCP port on 127.0.0.1 that nothing listened on a moment ago.
int free_tcp_port();

// The value of the first sample `name{labels}` (labels as written, e.g. {state="free"}) in a Prometheus
// text, or -1 when there is none.
double sample_value(const std::string& text, const std::string& name_and_labels);

}  // namespace themis::testing
