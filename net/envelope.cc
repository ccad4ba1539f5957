#include "net/envelope.h"

#include <kj/exception.h>

#include <cstring>

namespace themis::net {

OutMessage::OutMessage(std::uint64_t request_id)
    : builder_(std::make_unique<capnp::MallocMessageBuilder>()), envelope_(builder_->initRoot<wire::Envelope>()) {
  envelope_.setVersion(wire::PROTOCOL_VERSION);
  envelope_.setRequestId(request_id);
}

zmq::message_t OutMessage::to_frame() {
  const auto words = capnp::messageToFlatArray(*builder_);
  const auto bytes = words.asBytes();
  return zmq::message_t(bytes.begin(), bytes.size());
}

OutMessage make_error(std::uint64_t request_id, wire::ErrorCode code, const std::string& message) {
  OutMessage out(request_id);
  auto error = out.body().initError();
  error.setCode(code);
  error.setMessage(message);
  return out;
}

std::optional<InMessage> InMessage::parse(const zmq::message_t& frame, wire::ErrorCode* code, std::string* error) {
  *code = wire::ErrorCode::MALFORMED;
  if (frame.size() == 0 || frame.size() % sizeof(capnp::word) != 0) {
    *error = "frame of " + std::to_string(frame.size()) + " bytes is not a Cap'n Proto message";
    return std::nullopt;
  }
  InMessage in;
  in.words_ = kj::heapArray<capnp::word>(frame.size() / sizeof(capnp::word));
  std::memcpy(in.words_.begin(), frame.data(), frame.size());
  try {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = 8 * 1024 * 1024;
    in.reader_ = std::make_unique<capnp::FlatArrayMessageReader>(in.words_.asPtr(), options);
    const auto envelope = in.reader_->getRoot<wire::Envelope>();
    if (envelope.getVersion() != wire::PROTOCOL_VERSION) {
      *code = wire::ErrorCode::BAD_VERSION;
      *error = "protocol version " + std::to_string(envelope.getVersion()) + " is not supported (this peer speaks " +
               std::to_string(wire::PROTOCOL_VERSION) + ")";
      return std::nullopt;
    }
    (void)envelope.getBody().which();
  } catch (const kj::Exception& e) {
    *error = std::string("malformed Cap'n Proto message: ") + e.getDescription().cStr();
    return std::nullopt;
  }
  return in;
}

std::string body_name(wire::Envelope::Body::Which which) {
  using W = wire::Envelope::Body::Which;
  switch (which) {
    case W::ERROR: return "error";
    case W::ACK: return "ack";
    case W::REGISTER: return "register";
    case W::REGISTERED: return "registered";
    case W::HEARTBEAT: return "heartbeat";
    case W::HEARTBEAT_ACK: return "heartbeatAck";
    case W::LAUNCH: return "launch";
    case W::STOP: return "stop";
    case W::EXITED: return "exited";
    case W::OFFER: return "offer";
    case W::BID: return "bid";
    case W::GRANT: return "grant";
    case W::SUBMIT: return "submit";
    case W::SUBMITTED: return "submitted";
    case W::CANCEL: return "cancel";
    case W::QUERY: return "query";
    case W::QUERY_REPLY: return "queryReply";
    case W::ATTACH: return "attach";
    case W::ATTACHED: return "attached";
    case W::LAUNCH_JOB: return "launchJob";
    case W::STOP_JOB: return "stopJob";
    case W::APP_STATUS: return "appStatus";
    case W::START_LAUNCHER: return "startLauncher";
    case W::STOP_LAUNCHER: return "stopLauncher";
    case W::LAUNCHER_EXITED: return "launcherExited";
    case W::NODELET_STOPPING: return "nodeletStopping";
    case W::DRAIN: return "drain";
    case W::RESUME: return "resume";
    case W::READ_LOG: return "readLog";
    case W::LOG_CHUNK: return "logChunk";
    case W::APP_STATUS_ACK: return "appStatusAck";
  }
  return "unknown(" + std::to_string(static_cast<int>(which)) + ")";
}

}  // namespace themis::net
