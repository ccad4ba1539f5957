#pragma once
// CURVE on the launcher's report socket. A launcher that talks to its coordinator with CURVE binds its
// workers' report socket on a routable address (a nodelet starts it with `--reports tcp://*:*`), where any
// host that reaches the port could push iteration reports that feed the app's ρ and bids. So each launcher
// makes two fresh key pairs when it starts: the socket's (server) pair and one pair for its workers, and a
// ZAP handler in its context admits only the workers' public key. The workers get the three keys they need
// in their launch environment (worker/env.h), which travels launcher → coordinator → nodelet over CURVE and
// ends in the environment of ranks that run as the app owner's account. The keys live as long as the
// launcher: a restarted launcher binds a new socket with new keys, and the jobs an earlier launcher left
// running are stopped and resumed under it (launcher/daemon.cc).
#include <map>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "net/curve_keys.h"
#include "net/zap_handler.h"

namespace themis::launcher {

class ReportSecurity {
 public:
  // Generates the key pairs and starts the ZAP handler in `context` (before any server socket there binds).
  explicit ReportSecurity(zmq::context_t& context);

  // Makes `pull` a CURVE server that admits only this launcher's workers; call before it binds.
  void secure(zmq::socket_t& pull) const;
  // THEMIS_REPORT_SERVER_KEY, THEMIS_REPORT_PUBLIC_KEY, THEMIS_REPORT_SECRET_KEY for every launched rank.
  std::map<std::string, std::string> worker_env() const;
  // Connections refused because they presented another CURVE key.
  int rejected() const { return zap_->rejected(); }

 private:
  net::CurveKeyPair server_;
  net::CurveKeyPair workers_;
  std::unique_ptr<net::ZapHandler> zap_;
};

}  // namespace themis::launcher
