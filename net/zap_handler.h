#pragma once
// ZeroMQ Authentication Protocol (RFC 27) handler. Without one, libzmq admits *any* CURVE client that
// knows the server key; with it, only keys in the authorized list get in, and every message from an
// admitted connection carries the User-Id "<role>:<principal>".
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "net/authorized_keys.h"

namespace themis::net {

inline constexpr const char* kZapDomain = "themis";

class ZapHandler {
 public:
  // Binds inproc://zeromq.zap.01 in `context` (must happen before the server socket binds).
  ZapHandler(zmq::context_t& context, const std::vector<Principal>& principals);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  void replace_principals(const std::vector<Principal>& principals);
  int rejected() const { return rejected_.load(); }

 private:
  void serve();
  void serve_one();  // waits up to 100 ms for one request and answers it
  std::string lookup(const std::string& z85_key);

  zmq::socket_t socket_;
  std::mutex mutex_;
  std::map<std::string, std::string> user_ids_;  // z85 public key -> "<role>:<name>"
  std::atomic<bool> stop_{false};
  std::atomic<int> rejected_{0};
  std::thread thread_;
};

}  // namespace themis::net
