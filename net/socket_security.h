#pragma once
// CURVE on every TCP socket, or an explicit insecure mode that only binds/connects to loopback.
#include <string>
#include <zmq.hpp>

#include "net/curve_keys.h"

namespace themis::net {

// Server side: CURVE server with the ZAP domain enforced (a ZapHandler must exist in the context).
void make_curve_server(zmq::socket_t& socket, const CurveKeyPair& server_keys);
// Client side: pins the server's public key.
void make_curve_client(zmq::socket_t& socket, const CurveKeyPair& own_keys, const std::string& server_public_key);

// True for tcp://127.x.x.x:*, tcp://localhost:*, tcp://[::1]:*, ipc:// and inproc://.
bool is_loopback_endpoint(const std::string& endpoint);

}  // namespace themis::net
