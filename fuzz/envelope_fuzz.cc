// Fuzzes message framing (net/envelope.h): InMessage::parse must turn any frame into either an Envelope
// or an ErrorCode with a message, never a crash; an accepted Envelope must be re-encodable (the copy reads
// every field of every body within the reader's traversal limit). No daemon pretty-prints a whole message,
// so neither does this: capnp's toString on a list of 8M zero-sized structs is slow, not a defect.
#include <capnp/message.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <kj/exception.h>
#include <string>

#include "net/envelope.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const zmq::message_t frame(data, size);
  themis::wire::ErrorCode code{};
  std::string error;
  const auto in = themis::net::InMessage::parse(frame, &code, &error);
  if (!in) {
    if (error.empty()) std::abort();  // a rejection must say why
    return 0;
  }
  try {
    (void)themis::net::body_name(in->which());
    capnp::MallocMessageBuilder copy;
    copy.setRoot(in->envelope());
  } catch (const kj::Exception&) {
    // Within a parsed message a bad pointer surfaces here: the daemons catch kj::Exception around dispatch.
  }
  return 0;
}
