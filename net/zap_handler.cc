#include "net/zap_handler.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <cerrno>

namespace themis::net {

ZapHandler::ZapHandler(zmq::context_t& context, const std::vector<Principal>& principals)
    : socket_(context, zmq::socket_type::rep) {
  replace_principals(principals);
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind("inproc://zeromq.zap.01");
  // The thread starts with every signal blocked (a new thread inherits its creator's mask): a daemon's
  // SIGTERM or SIGHUP, or a fuzzer's SIGALRM, then reaches the main loop, which handles it, and never
  // interrupts this thread's poll.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  thread_ = std::thread([this] { serve(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

ZapHandler::~ZapHandler() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ZapHandler::replace_principals(const std::vector<Principal>& principals) {
  std::lock_guard lock(mutex_);
  user_ids_.clear();
  for (const auto& p : principals) user_ids_[p.public_key] = p.user_id();
}

std::string ZapHandler::lookup(const std::string& z85_key) {
  std::lock_guard lock(mutex_);
  const auto it = user_ids_.find(z85_key);
  return it == user_ids_.end() ? std::string() : it->second;
}

void ZapHandler::serve() {
  while (!stop_) {
    try {
      serve_one();
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;  // the context is closing
      if (e.num() == EINTR) continue;
      // An uncaught exception here would end the daemon; a refused request only costs that client.
      spdlog::error("zap: {}", e.what());
    }
  }
}

void ZapHandler::serve_one() {
  zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, std::chrono::milliseconds(100));
  if (!(item.revents & ZMQ_POLLIN)) return;
  std::vector<zmq::message_t> frames;
  while (true) {
    zmq::message_t frame;
    // A multipart request arrives whole: once poll saw its first frame, the others are there.
    if (!socket_.recv(frame, zmq::recv_flags::dontwait)) break;
    const bool more = frame.more();
    frames.push_back(std::move(frame));
    if (!more) break;
  }
  if (frames.empty()) return;
  // version, request id, domain, address, identity, mechanism, credentials...
  std::string request_id = frames.size() > 1 ? frames[1].to_string() : "";
  std::string status = "400", text = "denied", user_id;
  if (frames.size() < 6 || frames[0].to_string() != "1.0") {
    status = "500";
    text = "malformed ZAP request";
  } else if (frames[2].to_string() != kZapDomain) {
    text = "wrong ZAP domain";
  } else if (frames[5].to_string() != "CURVE" || frames.size() < 7 || frames[6].size() != 32) {
    text = "only CURVE is accepted";
  } else {
    char z85[41];
    zmq_z85_encode(z85, static_cast<const std::uint8_t*>(frames[6].data()), 32);
    user_id = lookup(z85);
    if (user_id.empty()) {
      ++rejected_;
      spdlog::warn("zap: rejected unenrolled key {} from {}", z85, frames[3].to_string());
    } else {
      status = "200";
      text = "OK";
    }
  }
  const std::string reply[] = {"1.0", request_id, status, text, user_id, ""};
  for (int i = 0; i < 6; ++i) {
    socket_.send(zmq::buffer(reply[i]), i < 5 ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

}  // namespace themis::net
