#pragma once
// A test's stand-in for an app's launcher on the launcher protocol (docs/launcher.md): a CURVE DEALER that
// attaches to one app and hands every offer (or every message) it receives to the test, which answers (or not)
// as it likes.
#include <zmq.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "net/curve_keys.h"
#include "net/envelope.h"
#include "net/socket_security.h"
#include "tests/integration/test_cluster.h"

namespace themis::testing {

class ProtocolLauncher {
 public:
  ProtocolLauncher(zmq::context_t& context, TestCluster& cluster, const std::string& user, std::int64_t app)
      : socket_(context, zmq::socket_type::dealer), app_(app) {
    net::make_curve_client(socket_, net::read_certificate(cluster.key(user, true)),
                           net::read_certificate(cluster.key("coordinator", false)).public_key);
    socket_.set(zmq::sockopt::linger, 0);
    socket_.connect(cluster.endpoint());
    net::OutMessage out(1);
    out.body().initAttach().setApp(app);
    send(out, zmq::send_flags::none);
  }

  // Reads what arrived and calls `on_offer(message)` for each offer; true once attached.
  template <typename OnOffer>
  bool pump(OnOffer&& on_offer) {
    return pump_all([&](const net::InMessage& in) {
      if (in.which() == wire::Envelope::Body::Which::OFFER) on_offer(in);
    });
  }

  // Reads what arrived and calls `on_message(message)` for each (grants, answers, offers...); true once attached.
  template <typename OnMessage>
  bool pump_all(OnMessage&& on_message) {
    zmq::message_t frame;
    while (socket_.recv(frame, zmq::recv_flags::dontwait)) {
      wire::ErrorCode code{};
      std::string error;
      auto in = net::InMessage::parse(frame, &code, &error);
      if (!in) continue;
      if (in->which() == wire::Envelope::Body::Which::ATTACHED) attached_ = true;
      on_message(*in);
    }
    return attached_;
  }

  // Answers the offer `in` with one row: `gpus` at ρ `rho` with `scope` (core/bid.h ShapeScope: 0 exact to 4
  // anywhere), and ρ `rho_no_new` without new GPUs.
  void bid_one_row(const net::InMessage& in, double rho_no_new, double rho, const std::vector<std::int32_t>& gpus,
                   std::uint8_t scope = 0) {
    net::OutMessage out(in.request_id());
    auto bid = out.body().initBid();
    bid.setApp(app_);
    bid.setRound(in.envelope().getBody().getOffer().getRound());
    bid.setRhoNoNew(rho_no_new);
    auto row = bid.initRows(1)[0];
    row.setRho(rho);
    row.setScope(scope);
    auto list = row.initGpus(static_cast<unsigned>(gpus.size()));
    for (unsigned g = 0; g < gpus.size(); ++g) list.set(g, gpus[g]);
    send(out);
  }

  void send(net::OutMessage& out, zmq::send_flags flags = zmq::send_flags::dontwait) {
    auto frame = out.to_frame();
    socket_.send(frame, flags);
  }

  std::int64_t app() const { return app_; }

 private:
  zmq::socket_t socket_;
  std::int64_t app_;
  bool attached_ = false;
};

}  // namespace themis::testing
