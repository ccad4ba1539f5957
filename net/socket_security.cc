#include "net/socket_security.h"

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
  const std::string rest = endpoint.substr(6);
  return rest.rfind("127.", 0) == 0 || rest.rfind("localhost:", 0) == 0 || rest.rfind("[::1]:", 0) == 0;
}

}  // namespace themis::net
