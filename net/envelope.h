#pragma once
// Message framing: one Cap'n Proto Envelope per ZeroMQ frame. Decoding never throws on bad input;
// it reports what is wrong so the caller can answer with an ErrorReply and a log line.
#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "themis.capnp.h"

namespace themis::net {

// A message being built: the Envelope's version is already set.
class OutMessage {
 public:
  explicit OutMessage(std::uint64_t request_id);
  wire::Envelope::Body::Builder body() { return envelope_.initBody(); }
  wire::Envelope::Builder envelope() { return envelope_; }
  zmq::message_t to_frame();

 private:
  std::unique_ptr<capnp::MallocMessageBuilder> builder_;  // on the heap so OutMessage can move
  wire::Envelope::Builder envelope_;
};

OutMessage make_error(std::uint64_t request_id, wire::ErrorCode code, const std::string& message);

// A received Envelope that owns its (word-aligned) bytes.
class InMessage {
 public:
  // Returns nullopt and sets `error` (with an ErrorCode) on a malformed frame or a wrong version.
  static std::optional<InMessage> parse(const zmq::message_t& frame, wire::ErrorCode* code, std::string* error);
  wire::Envelope::Reader envelope() const { return reader_->getRoot<wire::Envelope>(); }
  wire::Envelope::Body::Which which() const { return envelope().getBody().which(); }
  std::uint64_t request_id() const { return envelope().getRequestId(); }

 private:
  kj::Array<capnp::word> words_;
  std::unique_ptr<capnp::FlatArrayMessageReader> reader_;
};

std::string body_name(wire::Envelope::Body::Which which);

}  // namespace themis::net
