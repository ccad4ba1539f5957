// Fuzzes the coordinator's dispatch (Coordinator::dispatch): a real coordinator with CURVE configured, a
// real SQLite database, and each input a conversation of frames from admin, user and node principals.
// A handler may refuse a message (ErrorReply) but must never crash the daemon.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "coordinator/coordinator.h"
#include "fuzz/fuzz_input.h"
#include "net/authorized_keys.h"
#include "net/curve_keys.h"

namespace {

namespace fs = std::filesystem;
using themis::coordinator::Coordinator;

constexpr int kInputsPerDatabase = 2000;  // a fresh database now and then keeps each execution fast

struct Harness {
  fs::path dir;
  themis::coordinator::CoordinatorConfig config;
  std::unique_ptr<Coordinator> coordinator;
  int inputs = 0;
  int generation = 0;

  Harness() {
    // tmpfs where there is one: every commit of the database fsyncs (synchronous=FULL).
    const fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    dir = base / ("themis-coordinator-fuzz-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    themis::net::write_certificate(dir.string(), "coordinator", themis::net::generate_curve_keypair(), true);
    const auto user_key = themis::net::generate_curve_keypair();
    themis::net::append_authorized_key((dir / "authorized_keys").string(),
                                       {"alice", user_key.public_key, themis::net::Role::kUser});
    config.listen = "tcp://127.0.0.1:*";
    config.secret_key = (dir / "coordinator.key_secret").string();
    config.authorized_keys = (dir / "authorized_keys").string();
    config.insecure = false;
    renew();
  }
  ~Harness() {
    coordinator.reset();
    fs::remove_all(dir);
  }

  void renew() {
    coordinator.reset();
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      fs::remove(dir / ("fuzz-" + std::to_string(generation) + ".db" + suffix));
    }
    ++generation;
    config.database = (dir / ("fuzz-" + std::to_string(generation) + ".db")).string();
    coordinator = std::make_unique<Coordinator>(config);
    inputs = 0;
  }
};

// The selector byte picks who sends the frame (and from which connection).
Coordinator::Caller caller_of(std::uint8_t selector) {
  using themis::net::Role;
  switch (selector % 5) {
    case 0: return {Role::kAdmin, "root"};
    case 1: return {Role::kUser, "alice"};
    case 2: return {Role::kUser, "bob"};
    case 3: return {Role::kNode, "gpu01"};
    default: return {Role::kNode, "gpu02"};
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Harness harness;
  if (++harness.inputs > kInputsPerDatabase) harness.renew();
  for (const auto& record : themis::fuzz::split_records(data, size)) {
    const auto caller = caller_of(record.selector);
    const zmq::message_t frame(record.frame.data(), record.frame.size());
    harness.coordinator->dispatch("peer-" + std::to_string(record.selector % 5), caller, frame);
  }
  return 0;
}
