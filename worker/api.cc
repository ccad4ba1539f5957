// The only translation unit of the worker library that includes LibTorch and c10d.
#include "worker/api.h"

#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>
#include <type_traits>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/checkpoint_store.h"

#if defined(THEMIS_WORKER_WITH_NCCL)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace themis::worker {
namespace {

volatile std::sig_atomic_t g_stop_requested = 0;

extern "C" void on_stop_signal(int) { g_stop_requested = 1; }

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

// LibTorch 2 made Gloo and NCCL c10d::Backend subclasses; 1.13 (Debian's) has them derive from
// c10d::ProcessGroup. Both bases offer the collectives used here with the same signatures.
using Collectives = std::conditional_t<std::is_base_of_v<c10d::Backend, c10d::ProcessGroupGloo>, c10d::Backend,
                                       c10d::ProcessGroup>;

torch::TensorOptions on(torch::Device device, torch::ScalarType type) {
  return torch::TensorOptions().dtype(type).device(device);
}

// The device a module's (or optimizer's) tensors are on: where a checkpoint of it is loaded.
torch::Device device_of(const std::vector<at::Tensor>& tensors) {
  return tensors.empty() ? torch::Device(torch::kCPU) : tensors.front().device();
}

}  // namespace

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::kCompleted: return "completed";
    case RunStatus::kPreempted: return "preempted";
    case RunStatus::kPreemptedUnsaved: return "preempted-unsaved";
    case RunStatus::kCommunicationFailure: return "communication-failure";
    case RunStatus::kError: return "error";
  }
  return "error";
}

int exit_code(RunStatus status) {
  switch (status) {
    case RunStatus::kCompleted:
    case RunStatus::kPreempted: return kExitOk;
    case RunStatus::kCommunicationFailure: return kExitCommunicationFailure;
    case RunStatus::kPreemptedUnsaved:
    case RunStatus::kError: return kExitError;
  }
  return kExitError;
}

struct Session::ProcessGroup {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<Collectives> group;
};

Session::Session(WorkerEnv env, SessionOptions options) : env_(std::move(env)) {
  if (options.handle_sigterm) {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGTERM, &action, nullptr);
    ::sigaction(SIGINT, &action, nullptr);
  }
  reporter_ = env_.report_endpoint.empty()
                  ? make_stdout_reporter(env_.job_id, env_.rank)
                  : make_zmq_reporter(env_.job_id, env_.rank, env_.report_endpoint, env_.report_keys);
  if (!env_.checkpoint_dir.empty()) {
    store_ = std::make_unique<checkpoint::CheckpointStore>(env_.checkpoint_dir, options.keep_checkpoints);
    if (env_.rank == 0) store_->remove_temporaries();  // only rank 0 ever writes here
  }
  group_ = std::make_unique<ProcessGroup>();
  const auto& rdzv = env_.rendezvous;
  try {
    if (rdzv.kind == Rendezvous::Kind::kTcp) {
      c10d::TCPStoreOptions store_options;
      store_options.port = static_cast<std::uint16_t>(rdzv.port);
      store_options.isServer = env_.rank == 0;
      store_options.numWorkers = static_cast<std::size_t>(env_.world_size);
      store_options.timeout = env_.rendezvous_timeout;
      group_->store = c10::make_intrusive<c10d::TCPStore>(rdzv.host, store_options);
    } else {
      group_->store = c10::make_intrusive<c10d::FileStore>(rdzv.path, env_.world_size);
    }
    group_->store->setTimeout(env_.rendezvous_timeout);
    if (env_.backend == "nccl") {
#if defined(THEMIS_WORKER_WITH_NCCL)
      if (!torch::cuda::is_available()) {
        const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
        throw ConfigError(std::string("THEMIS_DIST_BACKEND=nccl, but no CUDA device is usable (CUDA_VISIBLE_DEVICES=") +
                          (visible ? visible : "unset") + ")");
      }
      device_ = torch::Device(torch::kCUDA, 0);
      auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
      nccl_options->timeout = std::chrono::duration_cast<std::chrono::milliseconds>(env_.comm_timeout);
      group_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(group_->store, env_.rank, env_.world_size,
                                                                  nccl_options);
      return;
#else
      throw ConfigError("THEMIS_DIST_BACKEND=nccl, but this build's LibTorch has no CUDA (Gloo only)");
#endif
    }
    auto gloo_options = c10d::ProcessGroupGloo::Options::create(
        std::chrono::duration_cast<std::chrono::milliseconds>(env_.comm_timeout));
    if (!env_.gloo_interface.empty()) {
      gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(env_.gloo_interface));
    } else if (rdzv.kind == Rendezvous::Kind::kFile || is_loopback(rdzv.host)) {
      gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else {
      gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    group_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(group_->store, env_.rank, env_.world_size,
                                                                gloo_options);
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    throw CommunicationError(std::string("rendezvous failed: ") + e.what());
  }
}

Session::~Session() = default;

void Session::request_stop() { g_stop_requested = 1; }
bool Session::stop_requested() { return g_stop_requested != 0; }

void Session::run_collective(const char* what, const std::function<void()>& body) {
  try {
    body();
  } catch (const CommunicationError&) {
    throw;
  } catch (const std::exception& e) {
    throw CommunicationError(std::string(what) + " failed: " + e.what());
  }
}

void Session::broadcast_parameters(torch::nn::Module& module) {
  run_collective("parameter broadcast", [&] {
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> tensors;
    for (auto& p : module.parameters()) tensors.push_back(p.data());
    for (auto& b : module.buffers()) tensors.push_back(b.data());
    if (tensors.empty()) return;
    std::vector<at::Tensor> flat{torch::cat([&] {
      std::vector<at::Tensor> views;
      for (auto& t : tensors) views.push_back(t.reshape(-1).to(torch::kFloat64));
      return views;
    }())};
    group_->group->broadcast(flat, c10d::BroadcastOptions{})->wait();
    std::int64_t offset = 0;
    for (auto& t : tensors) {
      const std::int64_t n = t.numel();
      t.copy_(flat[0].slice(0, offset, offset + n).view(t.sizes()));
      offset += n;
    }
  });
}

void Session::average_gradients(torch::nn::Module& module) {
  run_collective("gradient allreduce", [&] {
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> grads;
    for (auto& p : module.parameters()) {
      if (p.requires_grad()) {
        if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
        grads.push_back(p.grad());
      }
    }
    if (grads.empty()) return;
    std::vector<at::Tensor> views;
    for (auto& g : grads) views.push_back(g.reshape(-1));
    std::vector<at::Tensor> flat{torch::cat(views)};
    group_->group->allreduce(flat)->wait();
    flat[0].div_(env_.world_size);
    std::int64_t offset = 0;
    for (auto& g : grads) {
      const std::int64_t n = g.numel();
      g.copy_(flat[0].slice(0, offset, offset + n).view(g.sizes()));
      offset += n;
    }
  });
}

bool Session::agree_to_stop() {
  bool stop = false;
  run_collective("stop agreement", [&] {
    std::vector<at::Tensor> flag{torch::full({1}, g_stop_requested != 0 ? 1 : 0, on(device_, torch::kInt32))};
    c10d::AllreduceOptions max;
    max.reduceOp = c10d::ReduceOp::MAX;
    group_->group->allreduce(flag, max)->wait();
    stop = flag[0].item<std::int32_t>() != 0;
  });
  return stop;
}

void Session::broadcast_bytes(std::string& bytes) {
  run_collective("checkpoint broadcast", [&] {
    std::vector<at::Tensor> size{torch::full({1}, static_cast<std::int64_t>(bytes.size()), on(device_, torch::kInt64))};
    group_->group->broadcast(size)->wait();
    const std::int64_t n = size[0].item<std::int64_t>();
    if (n == 0) {
      bytes.clear();
      return;
    }
    bytes.resize(static_cast<std::size_t>(n));
    // The host tensor aliases the string's buffer: rank 0 sends it, the others receive into it (through a
    // copy on the device under NCCL, which moves device memory only).
    const at::Tensor host = torch::from_blob(bytes.data(), {n}, torch::kUInt8);
    std::vector<at::Tensor> data{device_.is_cpu() ? host : host.to(device_)};
    group_->group->broadcast(data)->wait();
    if (!device_.is_cpu()) host.copy_(data[0]);
  });
}

std::optional<checkpoint::Checkpoint> Session::restore_latest() {
  if (!store_) return std::nullopt;
  std::string encoded;
  if (env_.rank == 0) {
    const checkpoint::LoadResult loaded = store_->load_latest();
    for (const auto& skipped : loaded.skipped) {
      std::fprintf(stderr, "themis-worker: skipping checkpoint %s: %s\n", skipped.path.c_str(), skipped.reason.c_str());
    }
    if (loaded.checkpoint) encoded = checkpoint::encode(*loaded.checkpoint);
  }
  broadcast_bytes(encoded);
  if (encoded.empty()) return std::nullopt;
  return checkpoint::decode(encoded);
}

bool Session::save(const checkpoint::Checkpoint& c) {
  if (!store_) return false;
  std::int32_t ok = 0;
  if (env_.rank == 0) {
    try {
      const auto path = store_->save(c);
      ok = 1;
      reporter_->event({"checkpoint", static_cast<std::int64_t>(c.iteration), {{"path", path.string()}}});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "themis-worker: checkpoint at iteration %llu not saved: %s\n",
                   static_cast<unsigned long long>(c.iteration), e.what());
    }
  }
  run_collective("checkpoint acknowledgement", [&] {
    std::vector<at::Tensor> flag{torch::full({1}, ok, on(device_, torch::kInt32))};
    group_->group->broadcast(flag)->wait();
    ok = flag[0].item<std::int32_t>();
  });
  return ok != 0;
}

std::string serialize_module(torch::nn::Module& module) {
  std::ostringstream out;
  torch::serialize::OutputArchive archive;
  module.save(archive);
  archive.save_to(out);
  return std::move(out).str();
}

void deserialize_module(torch::nn::Module& module, const std::string& bytes) {
  std::istringstream in(bytes);
  torch::serialize::InputArchive archive;
  archive.load_from(in, device_of(module.parameters()));
  module.load(archive);
}

std::string serialize_optimizer(torch::optim::Optimizer& optimizer) {
  std::ostringstream out;
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  archive.save_to(out);
  return std::move(out).str();
}

void deserialize_optimizer(torch::optim::Optimizer& optimizer, const std::string& bytes) {
  std::istringstream in(bytes);
  torch::serialize::InputArchive archive;
  const auto& groups = optimizer.param_groups();
  archive.load_from(in, groups.empty() ? torch::Device(torch::kCPU) : device_of(groups.front().params()));
  optimizer.load(archive);
}

std::string parameter_digest(torch::nn::Module& module) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64-bit
  for (const auto& p : module.parameters()) {
    const at::Tensor t = p.detach().to(torch::kCPU).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
    const auto n = static_cast<std::size_t>(t.numel()) * t.element_size();
    for (std::size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 0x100000001b3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

RunResult run_training(Session& session, Trainable& trainable, const RunOptions& options) {
  RunResult result;
  Reporter& reporter = session.reporter();
  auto finish = [&](RunStatus status, std::string message) {
    result.status = status;
    result.message = std::move(message);
    if (status != RunStatus::kCommunicationFailure) result.parameter_digest = parameter_digest(trainable.module());
    EventRecord exit_event{"exit", result.iteration, {{"status", to_string(status)}}};
    if (!result.parameter_digest.empty()) exit_event.fields["digest"] = result.parameter_digest;
    if (!result.message.empty()) exit_event.fields["message"] = result.message;
    reporter.event(exit_event);
    reporter.flush();
    return result;
  };
  auto make_checkpoint = [&](std::int64_t iteration) {
    checkpoint::Checkpoint c;
    c.iteration = static_cast<std::uint64_t>(iteration);
    c.metadata = options.metadata;
    c.metadata["job"] = session.env().job_id;
    c.metadata["world_size"] = std::to_string(session.world_size());
    if (session.rank() == 0) trainable.save_state(c);  // identical on every rank; only rank 0's is written
    return c;
  };
  try {
    std::int64_t iteration = 0;
    if (auto restored = session.restore_latest()) {
      const auto ws = restored->metadata.find("world_size");
      if (ws != restored->metadata.end() && ws->second != std::to_string(session.world_size()) && session.rank() == 0) {
        std::fprintf(stderr, "themis-worker: checkpoint was written by %s ranks, resuming with %d\n",
                     ws->second.c_str(), session.world_size());
      }
      trainable.load_state(*restored);
      iteration = static_cast<std::int64_t>(restored->iteration);
      result.resumed_from = iteration;
    } else {
      session.broadcast_parameters(trainable.module());
    }
    result.iteration = iteration;
    reporter.event({"start", iteration,
                    {{"world_size", std::to_string(session.world_size())},
                     {"resumed_from", std::to_string(result.resumed_from)}}});
    while (iteration < options.iterations) {
      const auto t0 = std::chrono::steady_clock::now();
      if (session.agree_to_stop()) {
        const bool saved = session.save(make_checkpoint(iteration));
        return finish(saved ? RunStatus::kPreempted : RunStatus::kPreemptedUnsaved,
                      saved ? "" : "stop requested but no checkpoint was saved");
      }
      const double loss = trainable.forward_backward(iteration);
      session.average_gradients(trainable.module());
      trainable.apply_gradients();
      if (options.min_iteration_seconds > 0) {
        std::this_thread::sleep_until(t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(options.min_iteration_seconds)));
      }
      ++iteration;
      result.iteration = iteration;
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - t0;
      reporter.record({iteration, elapsed.count(), loss});
      const bool periodic = options.checkpoint_every > 0 && iteration % options.checkpoint_every == 0;
      if (session.checkpointing() && (periodic || iteration == options.iterations)) {
        if (!session.save(make_checkpoint(iteration)) && iteration == options.iterations) {
          return finish(RunStatus::kError, "final checkpoint not saved");
        }
      }
    }
    return finish(RunStatus::kCompleted, "");
  } catch (const CommunicationError& e) {
    return finish(RunStatus::kCommunicationFailure, e.what());
  } catch (const std::exception& e) {
    return finish(RunStatus::kError, e.what());
  }
}

}  // namespace themis::worker
