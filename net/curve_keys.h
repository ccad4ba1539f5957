#pragma once
// CURVE key pairs in the ZeroMQ certificate (zcert / ZPL) format that pyzmq and CZMQ read:
// <name>.key holds the public key, <name>.key_secret both keys and is written with mode 0600.
#include <string>

namespace themis::net {

struct CurveKeyPair {
  std::string public_key;  // 40 characters of Z85
  std::string secret_key;  // 40 characters of Z85; empty when only the public half is known
};

// Throws std::runtime_error when libzmq lacks CURVE.
CurveKeyPair generate_curve_keypair();

// Writes <dir>/<name>.key (0644) and <dir>/<name>.key_secret (0600). Refuses to overwrite unless `force`.
void write_certificate(const std::string& dir, const std::string& name, const CurveKeyPair& keys, bool force);

// Reads a certificate file; the secret key is filled only for a .key_secret file.
// Errors name the file and what is wrong.
CurveKeyPair read_certificate(const std::string& path);

bool is_z85_key(const std::string& text);

}  // namespace themis::net
