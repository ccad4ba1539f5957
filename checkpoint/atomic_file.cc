#include "checkpoint/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "checkpoint/checkpoint.h"

namespace themis::checkpoint {
namespace {

std::atomic<unsigned> g_temporary_counter{0};

[[noreturn]] void fail(const std::filesystem::path& path, const char* step) {
  throw CheckpointError(path.string() + ": " + step + " failed: " + std::strerror(errno));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace

bool is_temporary_name(std::string_view file_name) {
  return !file_name.empty() && file_name.front() == '.' && file_name.find(kTemporaryMarker) != std::string_view::npos;
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(int fd)>& write_contents) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::filesystem::path tmp =
      dir / ("." + path.filename().string() + std::string(kTemporaryMarker) + std::to_string(::getpid()) + "-" +
             std::to_string(g_temporary_counter.fetch_add(1)));
  Fd file(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (file.get() < 0) fail(tmp, "create");
  try {
    try {
      write_contents(file.get());
    } catch (const CheckpointError& e) {
      // The encoder knows only the descriptor; say which file could not be written (e.g. ENOSPC).
      throw CheckpointError(tmp.string() + " (for " + path.filename().string() + "): " + e.what());
    }
    if (::fsync(file.get()) != 0) fail(tmp, "fsync");
    if (::close(file.release()) != 0) fail(tmp, "close");
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail(path, "rename");
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  // The rename is durable only once the directory entry itself is on disk.
  Fd directory(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory.get() < 0) fail(dir, "open directory");
  if (::fsync(directory.get()) != 0) fail(dir, "fsync directory");
}

}  // namespace themis::checkpoint
