// Writes the binary seed corpora: one valid Envelope per message kind (envelope_fuzz) and conversations
// for the dispatch fuzzers. Usage: fuzz_seed_writer <fuzz/corpus>. Rerun when schema/themis.capnp changes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "net/envelope.h"

namespace {

namespace fs = std::filesystem;
using themis::net::OutMessage;
using namespace themis;

constexpr const char* kSpec = R"(name = "grid"
command = ["/bin/true", "--lr", "{lr}", "--job", "{job}"]
hyperparameters = { lr = ["0.1", "0.01"] }
resources = { gpus_per_job = 2, max_concurrent_jobs = 2 }
checkpoint = { dir = "/tmp/ckpt/{app}/{job}", grace_period = "5s" }

[scheduler]
kind = "all-jobs"
iterations = 100
)";

std::string bytes(OutMessage message) {
  const auto frame = message.to_frame();
  return std::string(static_cast<const char*>(frame.data()), frame.size());
}

// A Heartbeat whose `launchers` list holds `count` empty structs: a list of one element, its composite-list
// tag rewritten to `count` elements of no data and no pointers (one wire word in all, what a fuzzer found).
std::string heartbeat_with_empty_launchers(std::uint32_t count) {
  OutMessage out(7);
  auto h = out.body().initHeartbeat();
  h.setSeq(1);
  h.initLaunchers(1)[0].setApp(1);
  std::string frame = bytes(std::move(out));
  const auto word_at = [&](std::size_t w) {
    std::uint64_t word = 0;
    std::memcpy(&word, frame.data() + 8 + 8 * w, 8);  // after the one-segment table
    return word;
  };
  const auto set_word = [&](std::size_t w, std::uint64_t word) { std::memcpy(frame.data() + 8 + 8 * w, &word, 8); };
  const std::size_t words = (frame.size() - 8) / 8;
  const std::uint64_t tag = (std::uint64_t{1} << 2) | (std::uint64_t{2} << 32);  // 1 element, 2 data words
  for (std::size_t w = 0; w < words; ++w) {
    const std::uint64_t pointer = word_at(w);  // a composite-list pointer of 2 words...
    if ((pointer & 3) != 1 || ((pointer >> 32) & 7) != 7 || (pointer >> 35) != 2) continue;
    const auto offset = static_cast<std::int32_t>(static_cast<std::uint32_t>(pointer)) >> 2;
    const auto target = static_cast<std::ptrdiff_t>(w) + 1 + offset;
    if (target < 0 || static_cast<std::size_t>(target) >= words || word_at(static_cast<std::size_t>(target)) != tag) continue;
    set_word(w, pointer & 0x00000007ffffffffULL);  // ...now of 0 words,
    set_word(static_cast<std::size_t>(target), std::uint64_t{count} << 2);  // holding `count` empty elements
    wire::ErrorCode code{};
    std::string error;
    const auto in = themis::net::InMessage::parse(zmq::message_t(frame.data(), frame.size()), &code, &error);
    if (!in || in->envelope().getBody().getHeartbeat().getLaunchers().size() != count)
      throw std::logic_error("heartbeat_with_empty_launchers: the patched frame does not read back: " + error);
    return frame;
  }
  throw std::logic_error("heartbeat_with_empty_launchers: no composite-list tag found");
}

void running(capnp::List<wire::RunningWorker>::Builder list) {
  for (unsigned i = 0; i < list.size(); ++i) {
    list[i].setApp(1);
    list[i].setJob(i);
    list[i].setAttempt(1);
    list[i].setRank(0);
    list[i].setPid(4242);
  }
}

std::map<std::string, std::function<void(wire::Envelope::Body::Builder)>> bodies() {
  return {
      {"error", [](auto b) { b.initError().setCode(wire::ErrorCode::NOT_REGISTERED); }},
      {"ack", [](auto b) { b.initAck().setMessage("ok"); }},
      {"register",
       [](auto b) {
         auto r = b.initRegister();
         r.setHost("gpu01");
         r.setRack("r1");
         r.setAddress("127.0.0.1");
         r.setNodeletVersion("0.1.0");
         auto slots = r.initSlots(2);
         for (unsigned s = 0; s < 2; ++s) {
           auto gpus = slots[s].initGpus(2);
           for (unsigned g = 0; g < 2; ++g) {
             gpus[g].setLocalIndex(2 * s + g);
             gpus[g].setModel("declared");
           }
         }
         running(r.initRunning(1));
       }},
      {"registered",
       [](auto b) {
         auto r = b.initRegistered();
         r.setHeartbeatIntervalMs(1000);
         r.setLives(3);
         r.setFirstGpu(0);
       }},
      {"heartbeat",
       [](auto b) {
         auto h = b.initHeartbeat();
         h.setSeq(1);
         running(h.initRunning(2));
       }},
      {"heartbeatAck",
       [](auto b) {
         auto h = b.initHeartbeatAck();
         h.setSeq(1);
         h.setNextIntervalMs(1000);
         h.setLives(3);
       }},
      {"launch",
       [](auto b) {
         auto l = b.initLaunch();
         l.setApp(1);
         l.setJob(0);
         l.setAttempt(1);
         l.setRank(0);
         l.setWorldSize(2);
         l.setRendezvous("127.0.0.1:29500");
         auto devices = l.initDevices(2);
         devices.set(0, 0);
         devices.set(1, 1);
         auto command = l.initCommand(2);
         command.set(0, "/bin/true");
         command.set(1, "--x");
         auto env = l.initEnv(1);
         env[0].setName("THEMIS_HPARAMS");
         env[0].setValue("{\"lr\":0.1}");
         l.setWorkdir("/tmp");
         l.setCheckpointDir("/tmp/ckpt/1/0");
         l.setGraceMs(5000);
       }},
      {"stop",
       [](auto b) {
         auto s = b.initStop();
         s.setApp(1);
         s.setJob(0);
         s.setAttempt(1);
         s.setGraceMs(100);
         s.setReason("Cancelled");
       }},
      {"exited",
       [](auto b) {
         auto e = b.initExited();
         e.setApp(1);
         e.setJob(0);
         e.setAttempt(1);
         e.setRank(0);
         e.setExitCode(1);
         e.setSignal(0);
         e.setLogTail("Traceback: boom\n");
       }},
      {"offer",
       [](auto b) {
         auto o = b.initOffer();
         o.setRound(1);
         auto gpus = o.initGpus(3);
         for (unsigned i = 0; i < 3; ++i) gpus.set(i, static_cast<std::int32_t>(i));
         o.setDeadlineMs(1000);
         o.setActiveApps(2);
       }},
      {"bid",
       [](auto b) {
         auto m = b.initBid();
         m.setApp(1);
         m.setRound(1);
         m.setRhoNoNew(2.5);
         auto rows = m.initRows(2);
         auto g0 = rows[0].initGpus(1);
         g0.set(0, 0);
         rows[0].setRho(1.5);
         auto g1 = rows[1].initGpus(2);
         g1.set(0, 0);
         g1.set(1, 1);
         rows[1].setRho(1.1);
       }},
      {"grant",
       [](auto b) {
         auto g = b.initGrant();
         g.setApp(1);
         g.setRound(1);
         auto leases = g.initLeases(1);
         leases[0].setGpu(0);
         leases[0].setJob(0);
         leases[0].setStart(1.0);
         leases[0].setExpiry(601.0);
       }},
      {"submit",
       [](auto b) {
         auto s = b.initSubmit();
         s.setSpec(kSpec);
         s.setSpecName("grid.toml");
       }},
      {"submitted",
       [](auto b) {
         auto s = b.initSubmitted();
         s.setApp(1);
         s.setName("grid");
         s.setJobs(2);
       }},
      {"cancel", [](auto b) { b.initCancel().setApp(1); }},
      {"query_apps", [](auto b) { b.initQuery().setKind(wire::QueryKind::APPS); }},
      {"query_app",
       [](auto b) {
         auto q = b.initQuery();
         q.setKind(wire::QueryKind::APP);
         q.setApp(1);
       }},
      {"query_explain",
       [](auto b) {
         auto q = b.initQuery();
         q.setKind(wire::QueryKind::EXPLAIN);
         q.setApp(1);
       }},
      {"query_nodes", [](auto b) { b.initQuery().setKind(wire::QueryKind::NODES); }},
      {"query_leases", [](auto b) { b.initQuery().setKind(wire::QueryKind::LEASES); }},
      {"query_rounds", [](auto b) { b.initQuery().setKind(wire::QueryKind::ROUNDS); }},
      {"query_whoami", [](auto b) { b.initQuery().setKind(wire::QueryKind::WHOAMI); }},
      {"queryReply", [](auto b) { b.initQueryReply().setJson("{\"apiVersion\":\"themis/v1\"}"); }},
      {"attach", [](auto b) { b.initAttach().setApp(1); }},
      {"attached",
       [](auto b) {
         auto a = b.initAttached();
         a.setApp(1);
         a.setName("grid");
         a.setSpec(kSpec);
         a.setSubmittedAt(1.0);
         a.setLeaseMs(600000);
         a.setGpusPerJob(2);
         a.setMaxConcurrentJobs(2);
         a.setActiveApps(1);
         auto hosts = a.initHosts(1);
         hosts[0].setName("gpu01");
         hosts[0].setRack("r1");
         hosts[0].setFirstGpu(0);
         auto per_slot = hosts[0].initGpusPerSlot(2);
         per_slot.set(0, 2);
         per_slot.set(1, 2);
         auto jobs = a.initJobs(1);
         jobs[0].setJob(0);
         jobs[0].setHparams("{\"lr\":\"0.1\"}");
         jobs[0].setAttempt(0);
         jobs[0].setState("PENDING");
       }},
      {"launchJob",
       [](auto b) {
         auto l = b.initLaunchJob();
         l.setApp(1);
         l.setJob(0);
         l.setAttempt(1);
         auto gpus = l.initGpus(2);
         gpus.set(0, 0);
         gpus.set(1, 1);
         auto env = l.initEnv(1);
         env[0].setName("THEMIS_HPARAMS");
         env[0].setValue("{}");
       }},
      {"stopJob",
       [](auto b) {
         auto s = b.initStopJob();
         s.setApp(1);
         s.setJob(0);
         s.setAttempt(1);
         s.setReason("Preempted");
       }},
      {"appStatus",
       [](auto b) {
         auto s = b.initAppStatus();
         s.setApp(1);
         auto slowdowns = s.initSlowdowns(4);
         for (unsigned i = 0; i < 4; ++i) slowdowns.set(i, 1.0 + 0.5 * i);
       }},
  };
}

void write(const fs::path& path, const std::string& data) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << data;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_seed_writer <fuzz/corpus>\n";
    return 2;
  }
  const fs::path corpus = argv[1];
  std::map<std::string, std::string> frames;
  for (const auto& [name, fill] : bodies()) {
    OutMessage out(7);
    fill(out.body());
    frames[name] = bytes(std::move(out));
    write(corpus / "envelope_fuzz" / (name + ".bin"), frames[name]);
  }
  OutMessage old_version(1);
  old_version.envelope().setVersion(99);
  old_version.body().initAck();
  write(corpus / "envelope_fuzz" / "bad_version.bin", bytes(std::move(old_version)));

  // Dispatch conversations; selector: 0 admin, 1 alice, 2 bob, 3 node gpu01, 4 node gpu02.
  using fuzz::join_record;
  const std::map<std::string, std::string> coordinator = {
      {"node_life", join_record(3, frames["register"]) + join_record(3, frames["heartbeat"]) +
                        join_record(3, frames["exited"]) + join_record(0, frames["query_nodes"])},
      {"user_app", join_record(1, frames["submit"]) + join_record(2, frames["query_app"]) +
                       join_record(2, frames["cancel"]) + join_record(1, frames["query_explain"]) +
                       join_record(1, frames["cancel"])},
      {"launcher", join_record(3, frames["register"]) + join_record(1, frames["submit"]) +
                       join_record(1, frames["attach"]) + join_record(1, frames["bid"]) +
                       join_record(1, frames["launchJob"]) + join_record(1, frames["appStatus"]) +
                       join_record(1, frames["stopJob"])},
      {"admin_queries", join_record(0, frames["query_apps"]) + join_record(0, frames["query_leases"]) +
                            join_record(0, frames["query_rounds"]) + join_record(2, frames["query_whoami"])},
      {"wrong_roles", join_record(1, frames["register"]) + join_record(4, frames["heartbeat"]) +
                          join_record(4, frames["submit"]) + join_record(2, frames["offer"])},
      // Found by CI's short run (2026-11-29): one StopLauncher queued per listed launcher, 1.4 GB for one message.
      {"regression-launcher-list-amplification",
       join_record(3, frames["register"]) + join_record(3, heartbeat_with_empty_launchers(1'000'000))},
  };
  for (const auto& [name, data] : coordinator) write(corpus / "coordinator_dispatch_fuzz" / (name + ".bin"), data);
  const std::map<std::string, std::string> nodelet = {
      {"orders", join_record(0, frames["registered"]) + join_record(0, frames["launch"]) +
                     join_record(0, frames["heartbeatAck"]) + join_record(0, frames["stop"])},
      {"errors", join_record(0, frames["error"]) + join_record(0, frames["ack"]) + join_record(0, frames["submit"])},
  };
  for (const auto& [name, data] : nodelet) write(corpus / "nodelet_dispatch_fuzz" / (name + ".bin"), data);
  std::cout << "wrote " << frames.size() + 1 << " envelope seeds, " << coordinator.size() << " coordinator and "
            << nodelet.size() << " nodelet conversations under " << corpus << "\n";
  return 0;
}
