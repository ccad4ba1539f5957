// Rejected input names the field and the reason: app specs, message frames, and the endpoints the
// insecure mode accepts. The cases come from the fuzzers' findings (docs/reliability.md, "Fuzzing").
#include <gtest/gtest.h>

#include <string>

#include "spec/app_spec.h"
#include "net/envelope.h"
#include "net/socket_security.h"
#include "sim/trace.h"

namespace themis {
namespace {

std::string spec_error(const std::string& text) {
  try {
    spec::parse_app_spec(text, "s.toml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

const std::string kHead = "name = \"x\"\ncommand = [\"true\"]\n";

TEST(AppSpecErrors, NameTheFieldItsPlaceAndTheReason) {
  EXPECT_EQ(spec_error(kHead + "gpus = 3\n"),
            "s.toml:3:1: gpus: unknown key (known: checkpoint, command, env, hyperparameters, max_concurrent_jobs, name, "
            "resources, scheduler, workdir)");
  EXPECT_EQ(spec_error(kHead + "[resources]\ngpus_per_job = 0\n"), "s.toml:4:16: resources.gpus_per_job: must be a positive integer");
  EXPECT_EQ(spec_error("name = \"x\"\ncommand = [\"a\", 3]\n"), "s.toml:2:17: command: every element must be a string");
  EXPECT_EQ(spec_error("command = [\"true\"]\n"), "s.toml: name: required (a string)");
  EXPECT_EQ(spec_error("name = \"x\"\ncommand = []\n"), "s.toml: command: required (a non-empty array of strings)");
  EXPECT_EQ(spec_error("name = \"" + std::string(65, 'n') + "\"\ncommand = [\"true\"]\n"), "s.toml:1:8: name: must be 1 to 64 characters");
  EXPECT_NE(spec_error("name = = 1").find("s.toml:1:"), std::string::npos);
}

TEST(AppSpecErrors, DurationsOutOfRangeAreRejectedNotCast) {
  // "inf", "nan" and 1e400 all pass std::stod; casting them to an integer was undefined behaviour.
  for (const std::string grace : {"inf s", "infs", "nans", "1e400s", "1e300h"}) {
    const auto error = spec_error(kHead + "[checkpoint]\ngrace_period = \"" + grace + "\"\n");
    EXPECT_EQ(error.rfind("s.toml:4:16: checkpoint.grace_period: ", 0), 0u) << grace << ": " << error;
  }
  EXPECT_EQ(spec_error(kHead + "[checkpoint]\ngrace_period = \"25h\"\n"), "s.toml:4:16: checkpoint.grace_period: must be at most 24h");
  EXPECT_EQ(spec_error(kHead + "[checkpoint]\ngrace_period = \"-1s\"\n"),
            "s.toml:4:16: checkpoint.grace_period: '-1s': a duration cannot be negative");
  EXPECT_EQ(spec::parse_duration_ms("24h"), 86'400'000);
}

TEST(AppSpecErrors, TooManyJobsIsRefusedBeforeTheProductIsBuilt) {
  std::string values;
  for (int i = 0; i < 5000; ++i) values += (i ? ", " : "") + std::to_string(i);
  // 5000 x 5000 jobs: refused at once rather than after building 25 million maps.
  EXPECT_EQ(spec_error(kHead + "[hyperparameters]\na = [" + values + "]\nb = [" + values + "]\n"),
            "s.toml: hyperparameters: more than 10000 jobs");
  EXPECT_EQ(spec_error(kHead + "[hyperparameters]\na = [" + values + "]\nb = [1, 2]\n"), "accepted");
}

TEST(TraceErrors, ANumberTooLargeForADoubleIsAJsonErrorNotACrash) {
  // nlohmann::json reports it as out_of_range, not parse_error; it escaped the reader before.
  try {
    sim::parse_trace("{\"name\":\"a\",\"arrival\":5E552,\"jobs\":[]}\n", "t.jsonl");
    FAIL() << "accepted";
  } catch (const sim::TraceError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("t.jsonl:1: json: not valid JSON (", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("number overflow"), std::string::npos) << e.what();
  }
}

std::string frame_error(const std::string& bytes, wire::ErrorCode* code) {
  const zmq::message_t frame(bytes.data(), bytes.size());
  std::string error;
  if (net::InMessage::parse(frame, code, &error)) return "accepted";
  return error;
}

TEST(FrameErrors, SayWhatIsWrongWithTheFrame) {
  wire::ErrorCode code{};
  EXPECT_EQ(frame_error("", &code), "frame of 0 bytes is not a Cap'n Proto message");
  EXPECT_EQ(code, wire::ErrorCode::MALFORMED);
  EXPECT_EQ(frame_error("abc", &code), "frame of 3 bytes is not a Cap'n Proto message");
  // A segment table announcing more words than the frame holds.
  EXPECT_EQ(frame_error(std::string("\0\0\0\0\xff\xff\0\0", 8), &code).rfind("malformed Cap'n Proto message: ", 0), 0u);
  EXPECT_EQ(code, wire::ErrorCode::MALFORMED);
  net::OutMessage old(1);
  old.envelope().setVersion(99);
  old.body().initAck();
  const auto bytes = old.to_frame();
  EXPECT_EQ(frame_error(bytes.to_string(), &code), "protocol version 99 is not supported (this peer speaks 1)");
  EXPECT_EQ(code, wire::ErrorCode::BAD_VERSION);
}

TEST(InsecureEndpoints, OnlyWholeLoopbackAddressesPass) {
  for (const std::string ok : {"tcp://127.0.0.1:7310", "tcp://127.1.2.3:*", "tcp://localhost:7310", "tcp://[::1]:7310",
                               "ipc:///run/themis.sock", "inproc://reports"}) {
    EXPECT_TRUE(net::is_loopback_endpoint(ok)) << ok;
  }
  for (const std::string bad : {"tcp://0.0.0.0:7310", "tcp://*:7310", "tcp://10.0.0.5:7310", "tcp://127.0.0.1;10.0.0.5:7310",
                                "tcp://127.example.com:7310", "tcp://127.0.0.1", "tcp://127.0.0.1:7310x", "tcp://localhost.evil:1",
                                "udp://127.0.0.1:7310", "tcp://eth0:7310", ""}) {
    EXPECT_FALSE(net::is_loopback_endpoint(bad)) << bad;
  }
}

}  // namespace
}  // namespace themis
