#include "net/socket_security.h"

#include <arpa/inet.h>

#include <algorithm>

#include "net/zap_handler.h"

namespace themis::net {

void make_curve_server(zmq::socket_t& socket, const CurveKeyPair& server_keys) {
  socket.set(zmq::sockopt::zap_domain, kZapDomain);
  // ZMQ_ZAP_ENFORCE_DOMAIN is a draft option in Debian's libzmq; setting the domain and running a
  // handler is what makes ZAP mandatory for CURVE.
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, server_keys.secret_key);
}

void make_curve_client(zmq::socket_t& socket, const CurveKeyPair& own_keys, const std::string& server_public_key) {
  socket.set(zmq::sockopt::curve_serverkey, server_public_key);
  socket.set(zmq::sockopt::curve_publickey, own_keys.public_key);
  socket.set(zmq::sockopt::curve_secretkey, own_keys.secret_key);
}

bool is_loopback_endpoint(const std::string& endpoint) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return true;
  if (endpoint.rfind("tcp://", 0) != 0) return false;
  // The whole address must be loopback: a prefix test would pass "127.0.0.1;10.0.0.5:7310" (libzmq's
  // source;destination form) or a DNS name such as "127.example.com".
  const std::string rest = endpoint.substr(6);
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos) return false;
  const std::string host = rest.substr(0, colon);
  const std::string port = rest.substr(colon + 1);
  const bool port_ok = port == "*" || (!port.empty() && port.size() <= 5 &&
                                       std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }));
  if (!port_ok) return false;
  if (host == "localhost" || host == "[::1]") return true;
  in_addr address{};
  return ::inet_pton(AF_INET, host.c_str(), &address) == 1 && (ntohl(address.s_addr) >> 24) == 127;
}

}  // namespace themis::net
