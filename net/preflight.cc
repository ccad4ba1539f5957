#include "net/preflight.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <zmq.hpp>

namespace themis::net {
namespace {

std::string user_note() {
  return " (running as uid " + std::to_string(::geteuid()) + ")";
}

}  // namespace

void Preflight::file_readable(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    permanent(what + ": cannot read " + path + ": " + std::strerror(error) + (error == EACCES ? user_note() : ""));
    return;
  }
  ::close(fd);
}

void Preflight::directory_writable(const std::string& path, const std::string& what, bool created_at_start) {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(path.empty() ? "." : path, ec);
  if (!std::filesystem::exists(dir, ec)) {
    if (!created_at_start) {
      permanent(what + ": directory " + dir.string() + " does not exist");
      return;
    }
    auto ancestor = dir.parent_path();
    while (!ancestor.empty() && ancestor != ancestor.root_path() && !std::filesystem::exists(ancestor, ec)) {
      ancestor = ancestor.parent_path();
    }
    if (::access(ancestor.c_str(), W_OK | X_OK) != 0) {
      permanent(what + ": cannot create directory " + dir.string() + " in " + ancestor.string() + ": " + std::strerror(errno) +
                user_note());
    }
    return;
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    permanent(what + ": " + dir.string() + " is not a directory");
  } else if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    permanent(what + ": cannot write in directory " + dir.string() + ": " + std::strerror(errno) + user_note());
  }
}

void Preflight::endpoint_bindable(const std::string& endpoint, const std::string& what) {
  // Its own context, closed before returning: closing a context waits until its sockets have released their ports.
  zmq::context_t context(1);
  zmq::socket_t socket(context, zmq::socket_type::router);
  socket.set(zmq::sockopt::linger, 0);
  try {
    socket.bind(endpoint);
  } catch (const zmq::error_t& e) {
    const std::string message = what + ": cannot bind " + endpoint + ": " + e.what();
    if (e.num() == EADDRINUSE) transient(message + "");
    else permanent(message);
  }
  socket.close();
  context.close();
}

int Preflight::exit_code() const {
  if (problems_.empty()) return 0;
  for (const auto& p : problems_) {
    if (p.permanent) return kExitConfig;
  }
  return kExitTempFail;
}

std::string Preflight::report() const {
  std::string out;
  for (const auto& p : problems_) out += (p.permanent ? "error: " : "error (transient): ") + p.message + "\n";
  return out;
}

}  // namespace themis::net
