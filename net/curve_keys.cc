#include "net/curve_keys.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <zmq.h>

namespace themis::net {

bool is_z85_key(const std::string& text) {
  if (text.size() != 40) return false;
  unsigned char decoded[32];
  return zmq_z85_decode(decoded, text.c_str()) != nullptr;
}

CurveKeyPair generate_curve_keypair() {
  char pub[41];
  char sec[41];
  if (zmq_curve_keypair(pub, sec) != 0) {
    throw std::runtime_error("zmq_curve_keypair failed: libzmq was built without CURVE support");
  }
  return {pub, sec};
}

namespace {

std::string certificate_text(const CurveKeyPair& keys, bool with_secret) {
  std::ostringstream out;
  out << (with_secret ? "#   ZeroMQ CURVE **Secret** Certificate\n#   DO NOT PROVIDE THIS FILE TO OTHER USERS "
                        "nor change its permissions.\n"
                      : "#   ZeroMQ CURVE Public Certificate\n#   Exchange securely, or use a secure "
                        "mechanism to verify the contents\n#   of this file after exchange.\n")
      << "\nmetadata\ncurve\n    public-key = \"" << keys.public_key << "\"\n";
  if (with_secret) out << "    secret-key = \"" << keys.secret_key << "\"\n";
  return out.str();
}

void write_file(const std::string& path, const std::string& text, mode_t mode, bool force) {
  if (!force && std::filesystem::exists(path)) {
    throw std::runtime_error(path + ": already exists (use --force to overwrite)");
  }
  // Create with the final mode so a secret is never readable by others, not even briefly.
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  const mode_t old_mask = ::umask(0077);
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) {
      ::umask(old_mask);
      throw std::runtime_error(path + ": cannot write");
    }
  }
  ::umask(old_mask);
  if (::chmod(tmp.c_str(), mode) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error(path + ": cannot set mode or rename");
  }
}

}  // namespace

void write_certificate(const std::string& dir, const std::string& name, const CurveKeyPair& keys, bool force) {
  if (!std::filesystem::exists(dir)) {
    std::filesystem::create_directories(dir);
    // A key directory made here is its owner's alone; an existing one keeps the mode its admin gave it.
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
  }
  const std::string base = (std::filesystem::path(dir) / name).string();
  write_file(base + ".key", certificate_text(keys, false), 0644, force);
  write_file(base + ".key_secret", certificate_text(keys, true), 0600, force);
}

CurveKeyPair read_certificate(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open certificate");
  CurveKeyPair keys;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    auto trim = [](std::string s) {
      const auto b = s.find_first_not_of(" \t\"");
      const auto e = s.find_last_not_of(" \t\"\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    const std::string key = trim(line.substr(0, eq));
    const std::string value = trim(line.substr(eq + 1));
    if (key != "public-key" && key != "secret-key") continue;
    if (!is_z85_key(value)) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + key + ": not a 40-character Z85 key");
    }
    (key == "public-key" ? keys.public_key : keys.secret_key) = value;
  }
  if (keys.public_key.empty()) throw std::runtime_error(path + ": no public-key in certificate");
  return keys;
}

}  // namespace themis::net
