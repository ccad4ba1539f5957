// Fuzzes the nodelet's dispatch of coordinator orders (Nodelet::handle): Registered, HeartbeatAck, Launch,
// Stop, Error and every other body. A Launch keeps all its fields but its command, which is emptied so the
// fuzzer never starts a process: everything up to the fork (directories, environment) still runs.
// StartLauncher orders are skipped: their command comes from the nodelet's config, not the message, and
// all that precedes their fork is writing the key they carry (tests/security covers key files).
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <kj/exception.h>
#include <memory>
#include <optional>
#include <string>

#include "fuzz/fuzz_input.h"
#include "net/envelope.h"
#include "nodelet/nodelet.h"

namespace {

namespace fs = std::filesystem;
constexpr int kInputsPerNodelet = 2000;  // then a fresh work dir, so job directories do not pile up

struct Harness {
  themis::nodelet::NodeletConfig config;
  std::unique_ptr<themis::nodelet::Nodelet> nodelet;
  int inputs = 0;

  Harness() {
    config.host = "gpu01";
    config.slots = {{0, 1}, {2, 3}};
    config.insecure = true;
    config.coordinator = "tcp://127.0.0.1:9";  // never answers: replies stay queued, then dropped
    config.launcher_command = "/nonexistent/themis-launch";
    config.work_dir = (fs::temp_directory_path() / ("themis-nodelet-fuzz-" + std::to_string(::getpid()))).string();
    renew();
  }
  ~Harness() {
    nodelet.reset();
    fs::remove_all(config.work_dir);
  }
  void renew() {
    nodelet.reset();
    fs::remove_all(config.work_dir);
    nodelet = std::make_unique<themis::nodelet::Nodelet>(config);
    inputs = 0;
  }
};

// nullopt: a StartLauncher, or a Launch too malformed to copy (the nodelet would fail the same way reading
// it; skipped so that no command can reach exec).
std::optional<zmq::message_t> without_commands(const std::string& bytes) {
  zmq::message_t frame(bytes.data(), bytes.size());
  themis::wire::ErrorCode code{};
  std::string error;
  const auto in = themis::net::InMessage::parse(frame, &code, &error);
  if (in && in->which() == themis::wire::Envelope::Body::Which::START_LAUNCHER) return std::nullopt;
  if (!in || in->which() != themis::wire::Envelope::Body::Which::LAUNCH) return frame;
  try {
    capnp::MallocMessageBuilder copy;
    copy.setRoot(in->envelope());
    copy.getRoot<themis::wire::Envelope>().getBody().getLaunch().initCommand(0);
    const auto words = capnp::messageToFlatArray(copy);
    const auto out = words.asBytes();
    return zmq::message_t(out.begin(), out.size());
  } catch (const kj::Exception&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Harness harness;
  if (++harness.inputs > kInputsPerNodelet) harness.renew();
  for (const auto& record : themis::fuzz::split_records(data, size)) {
    auto frame = without_commands(record.frame);
    if (frame) harness.nodelet->handle(*frame);
  }
  return 0;
}
