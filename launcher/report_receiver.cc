#include "launcher/report_receiver.h"

namespace themis::launcher {

ReportReceiver::ReportReceiver(zmq::context_t& context, const std::string& endpoint,
                               const std::function<void(zmq::socket_t&)>& before_bind)
    : socket_(context, zmq::socket_type::pull) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.set(zmq::sockopt::rcvhwm, 100000);
  if (before_bind) before_bind(socket_);
  socket_.bind(endpoint);
  endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
}

int ReportReceiver::drain(const std::function<void(std::string_view line)>& on_line) {
  int lines = 0;
  while (true) {
    zmq::message_t message;
    if (!socket_.recv(message, zmq::recv_flags::dontwait)) break;
    const std::string_view text(static_cast<const char*>(message.data()), message.size());
    std::size_t begin = 0;
    while (begin < text.size()) {
      auto end = text.find('\n', begin);
      if (end == std::string_view::npos) end = text.size();
      if (end > begin) {
        on_line(text.substr(begin, end - begin));
        ++lines;
      }
      begin = end + 1;
    }
  }
  return lines;
}

}  // namespace themis::launcher
