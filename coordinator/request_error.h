#pragma once
// A request the coordinator refuses, with the wire code its ErrorReply carries. Handlers throw these;
// Coordinator::dispatch turns them into the reply, the one place a code is chosen. Any other exception
// from a handler is answered `internal`.
#include <stdexcept>
#include <string>

#include "themis.capnp.h"

namespace themis::coordinator {

class RequestError : public std::runtime_error {
 public:
  RequestError(wire::ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  wire::ErrorCode code() const { return code_; }

 private:
  wire::ErrorCode code_;
};

// The messages keep the prefixes users read ("denied: …", "not found: …").
inline RequestError denied(const std::string& what) { return {wire::ErrorCode::DENIED, "denied: " + what}; }
inline RequestError not_found(const std::string& what) { return {wire::ErrorCode::NOT_FOUND, "not found: " + what}; }
// An app spec (or submit) rejected; `what` names the field.
inline RequestError bad_spec(const std::string& what) { return {wire::ErrorCode::BAD_SPEC, what}; }

}  // namespace themis::coordinator
