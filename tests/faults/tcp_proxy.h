#pragma once
// A TCP proxy on 127.0.0.1 between a client and a server, run by a thread of the test process: it
// forwards bytes both ways until partition(), which closes every connection and refuses new ones (each
// is accepted and closed at once), as a cut network link does; heal() forwards again.
#include <atomic>
#include <string>
#include <thread>

namespace themis::faults {

class TcpProxy {
 public:
  // Listens on an ephemeral loopback port; connections go to 127.0.0.1:`target_port`.
  explicit TcpProxy(int target_port);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  int port() const { return port_; }
  std::string endpoint() const { return "tcp://127.0.0.1:" + std::to_string(port_); }
  void partition() { partitioned_ = true; }
  void heal() { partitioned_ = false; }

 private:
  void serve();

  int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> partitioned_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace themis::faults
