// worker_overhead <dir> [iterations per round] [rounds]: (1) the per-iteration cost of themis' reporting (timing + Reporter::record over
// ZeroMQ PUSH to a PULL socket drained by a thread) against the same LibTorch loop without it;
// (2) save and restore time of a checkpoint of a ~100 MB model with its SGD momentum, in <dir>.
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bench/bench_support.h"
#include "checkpoint/checkpoint_store.h"
#include "worker/api.h"
#include "worker/reporter.h"

namespace {

using Clock = std::chrono::steady_clock;
using themis::worker::IterationRecord;

torch::nn::Sequential mlp(std::int64_t in, std::int64_t hidden, std::int64_t out) {
  return torch::nn::Sequential(torch::nn::Linear(in, hidden), torch::nn::ReLU(), torch::nn::Linear(hidden, hidden),
                               torch::nn::ReLU(), torch::nn::Linear(hidden, out));
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void reporting_overhead(int iterations_per_round, int rounds) {
  zmq::context_t context;
  zmq::socket_t pull(context, zmq::socket_type::pull);
  pull.bind("tcp://127.0.0.1:*");
  const std::string endpoint = pull.get(zmq::sockopt::last_endpoint);
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> received_bytes{0};
  std::thread drain([&] {
    zmq::message_t m;
    while (!done) {
      zmq::pollitem_t item{pull.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(20));
      while (pull.recv(m, zmq::recv_flags::dontwait)) received_bytes += m.size();
    }
  });
  auto reporter = themis::worker::make_zmq_reporter("bench_1", 0, endpoint);

  torch::manual_seed(1);
  auto model = mlp(32, 256, 10);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  const auto x = torch::randn({64, 32});
  const auto y = torch::randint(10, {64}, torch::kInt64);
  auto step = [&] {
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
    return loss.item<double>();
  };
  // Rounds alternate bare and reported loops, so a load that drifts hits both alike; medians of rounds.
  const int kIterations = iterations_per_round;
  const int kRounds = rounds;
  std::vector<double> bare, reported;
  std::int64_t iteration = 0;
  for (int i = 0; i < 200; ++i) step();  // warm-up
  for (int round = 0; round < kRounds; ++round) {
    auto t0 = Clock::now();
    for (int i = 0; i < kIterations; ++i) step();
    bare.push_back(seconds_since(t0) / kIterations);
    t0 = Clock::now();
    for (int i = 0; i < kIterations; ++i) {
      const auto it0 = Clock::now();
      const double loss = step();
      reporter->record(IterationRecord{++iteration, seconds_since(it0), loss});
    }
    reported.push_back(seconds_since(t0) / kIterations);
  }
  // The reporting path alone, many times, for a noise-free per-call cost.
  constexpr int kCalls = 200000;
  const auto c0 = Clock::now();
  for (int i = 0; i < kCalls; ++i) {
    const auto it0 = Clock::now();
    reporter->record(IterationRecord{++iteration, seconds_since(it0), 0.5});
  }
  const double per_call = seconds_since(c0) / kCalls;
  reporter->flush();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  done = true;
  drain.join();
  std::sort(bare.begin(), bare.end());
  std::sort(reported.begin(), reported.end());
  const double b = bare[static_cast<std::size_t>(kRounds / 2)], r = reported[static_cast<std::size_t>(kRounds / 2)];
  std::printf("reporting: MLP 32-256-256-10, batch 64, 1 thread, %d rounds x %d iterations\n", kRounds, kIterations);
  std::printf("  bare loop           median %.1f us/iteration\n", b * 1e6);
  std::printf("  loop + reporting    median %.1f us/iteration  (difference %+.2f%%)\n", r * 1e6, (r - b) / b * 100);
  std::printf("  reporting path alone %.0f ns/iteration = %.3f%% of a bare iteration; dropped %llu; %.1f MB received\n",
              per_call * 1e9, per_call / b * 100, static_cast<unsigned long long>(reporter->dropped()),
              static_cast<double>(received_bytes.load()) / 1e6);
}

void checkpoint_of_a_100mb_model(const std::filesystem::path& dir) {
  torch::manual_seed(2);
  auto model = mlp(32, 5000, 10);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  auto loss = model->forward(torch::randn({8, 32})).sum();
  loss.backward();
  opt.step();  // creates the momentum buffers
  std::int64_t params = 0;
  for (const auto& p : model->parameters()) params += p.numel();
  themis::checkpoint::CheckpointStore store(dir / "ckpt-100mb", 2);
  for (int rep = 1; rep <= 3; ++rep) {
    auto t0 = Clock::now();
    themis::checkpoint::Checkpoint c;
    c.iteration = static_cast<std::uint64_t>(rep);
    c.blobs["model"] = themis::worker::serialize_module(*model);
    c.blobs["optimizer"] = themis::worker::serialize_optimizer(opt);
    const double serialize_s = seconds_since(t0);
    const auto path = store.save(c);
    const double save_s = seconds_since(t0);
    t0 = Clock::now();
    const auto loaded = store.load_latest();
    const double read_s = seconds_since(t0);
    themis::worker::deserialize_module(*model, loaded.checkpoint->blobs.at("model"));
    themis::worker::deserialize_optimizer(opt, loaded.checkpoint->blobs.at("optimizer"));
    const double restore_s = seconds_since(t0);
    std::printf("checkpoint rep %d: %lld parameters (%.1f MB fp32), file %.1f MB: save %.3f s (serialize %.3f s), "
                "restore %.3f s (read+verify %.3f s)\n",
                rep, static_cast<long long>(params), static_cast<double>(params) * 4 / 1e6,
                static_cast<double>(std::filesystem::file_size(path)) / 1e6, save_s, serialize_s, restore_s, read_s);
  }
  std::filesystem::remove_all(dir / "ckpt-100mb");
}

}  // namespace

int main(int argc, char** argv) {
  constexpr std::string_view kUsage =
      "usage: worker_overhead DIR [iterations per round (2000)] [rounds (7)]\n"
      "  the reporter's overhead on training iterations, then a 100 MB model's checkpoint in DIR/ckpt-100mb (removed)\n";
  std::vector<std::string> args;
  if (const int code = themis::bench::positional_args("worker_overhead", kUsage, argc, argv, 1, 3, args); code >= 0)
    return code;
  int iterations = 2000;
  int rounds = 7;
  try {
    if (args.size() > 1) iterations = themis::bench::positive_int("iterations per round", args[1]);
    if (args.size() > 2) rounds = themis::bench::positive_int("rounds", args[2]);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "worker_overhead: %s\n", e.what());
    return 2;
  }
  torch::set_num_threads(1);
  reporting_overhead(iterations, rounds);
  checkpoint_of_a_100mb_model(args[0]);
  return 0;
}
