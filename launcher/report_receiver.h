#pragma once
// The launcher's end of the worker reports: a ZeroMQ PULL socket that every rank's PUSH reporter
// (worker/reporter.h) connects to. A message carries one or more JSON lines.
#include <functional>
#include <string>
#include <string_view>
#include <zmq.hpp>

namespace themis::launcher {

class ReportReceiver {
 public:
  // Binds `endpoint` (e.g. tcp://127.0.0.1:* for a free port); endpoint() is the address bound.
  // `before_bind` may set the socket's security first (ReportSecurity::secure in CURVE mode).
  ReportReceiver(zmq::context_t& context, const std::string& endpoint,
                 const std::function<void(zmq::socket_t&)>& before_bind = {});
  const std::string& endpoint() const { return endpoint_; }
  zmq::socket_t& socket() { return socket_; }
  // Hands every line received so far to `on_line`, without waiting. Returns the number of lines.
  int drain(const std::function<void(std::string_view line)>& on_line);

 private:
  zmq::socket_t socket_;
  std::string endpoint_;
};

}  // namespace themis::launcher
