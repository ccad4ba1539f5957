#pragma once
// The worker library: what themis-train is built from, and what a lab uses to wrap its own model and
// loop with the same rendezvous, gradient averaging, stop agreement, checkpointing and reporting.
//
//   themis::worker::Session session(themis::worker::worker_env_from_process());
//   MyTrainable model(...);                       // implements themis::worker::Trainable
//   auto result = themis::worker::run_training(session, model, {.iterations = 10000, .checkpoint_every = 500});
//   return themis::worker::exit_code(result.status);
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "checkpoint/checkpoint.h"
#include "worker/env.h"
#include "worker/reporter.h"

namespace themis::checkpoint {
class CheckpointStore;
}

namespace themis::worker {

// Process exit codes of a worker (docs/worker.md).
inline constexpr int kExitOk = 0;                      // completed, or preempted with a checkpoint saved
inline constexpr int kExitError = 1;                   // anything else, including preempted without a save
inline constexpr int kExitUsage = 2;                   // bad command line
inline constexpr int kExitCommunicationFailure = 75;   // a peer died or a collective timed out (EX_TEMPFAIL)
inline constexpr int kExitConfig = 78;                 // bad environment (EX_CONFIG)

enum class RunStatus { kCompleted, kPreempted, kPreemptedUnsaved, kCommunicationFailure, kError };
const char* to_string(RunStatus status);
int exit_code(RunStatus status);

// A collective failed: a peer is gone, or it did not answer within the communication timeout.
class CommunicationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SessionOptions {
  std::size_t keep_checkpoints = 3;
  bool handle_sigterm = true;  // SIGTERM (and SIGINT) set the local stop request; nothing else
};

// One rank's membership in the job: the c10d process group (Gloo, or NCCL) plus checkpoint store and
// reporter. Every method marked "collective" must be called by all ranks in the same order.
class Session {
 public:
  explicit Session(WorkerEnv env, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  const WorkerEnv& env() const { return env_; }
  Reporter& reporter() { return *reporter_; }
  // Where this rank's model, batches and collectives live: under NCCL the first CUDA device the process
  // sees (the nodelet sets CUDA_VISIBLE_DEVICES to the rank's GPU), under Gloo the CPU.
  torch::Device device() const { return device_; }

  // Collective: every rank gets rank 0's parameters and buffers.
  void broadcast_parameters(torch::nn::Module& module);
  // Collective: gradients summed over ranks (one flattened allreduce) and divided by the world size.
  void average_gradients(torch::nn::Module& module);
  // Collective: true on every rank when any rank asked to stop (SIGTERM or request_stop()).
  bool agree_to_stop();

  // Local: ask the job to stop at the next agreement. Async-signal-safe.
  static void request_stop();
  static bool stop_requested();

  bool checkpointing() const { return store_ != nullptr; }
  // Collective: rank 0 loads the newest checkpoint that verifies (naming any it skips on stderr) and
  // sends it to every rank; nullopt everywhere when there is none. Only rank 0 reads the directory.
  std::optional<checkpoint::Checkpoint> restore_latest();
  // Collective: rank 0 writes `checkpoint` (only rank 0's argument is used); every rank learns whether
  // it was saved. Returns false when the write failed (reason on stderr) or checkpointing is off.
  bool save(const checkpoint::Checkpoint& checkpoint);

 private:
  void broadcast_bytes(std::string& bytes);
  void run_collective(const char* what, const std::function<void()>& body);

  WorkerEnv env_;
  torch::Device device_{torch::kCPU};
  std::unique_ptr<Reporter> reporter_;
  std::unique_ptr<checkpoint::CheckpointStore> store_;
  struct ProcessGroup;
  std::unique_ptr<ProcessGroup> group_;
};

// The model side of a training loop. Model and optimizer state must be identical on every rank after
// each step (synchronous SGD); per-rank state (data shard position) must be derivable from the trainer
// state plus the rank, so that rank 0's checkpoint is enough to resume every rank.
class Trainable {
 public:
  virtual ~Trainable() = default;
  virtual torch::nn::Module& module() = 0;
  // Forward and backward for `iteration` (0-based) on this rank's shard; gradients are left in place.
  virtual double forward_backward(std::int64_t iteration) = 0;
  // Applies the (already averaged) gradients: optimizer.step(), zero_grad().
  virtual void apply_gradients() = 0;
  // Adds the model, optimizer and trainer state as blobs; restored by load_state on every rank.
  virtual void save_state(checkpoint::Checkpoint& out) = 0;
  virtual void load_state(const checkpoint::Checkpoint& in) = 0;
};

struct RunOptions {
  std::int64_t iterations = 100;
  std::int64_t checkpoint_every = 0;  // 0: only on stop and at the end
  // Each iteration takes at least this long: the rest is slept after the optimizer step. A paced job's
  // length is wall time, not CPU time, so it does not stretch when other processes load the machine
  // (tests and demos that time faults against leases use it). 0: unpaced.
  double min_iteration_seconds = 0;
  std::map<std::string, std::string> metadata;  // copied into every checkpoint (model, hyper-parameters)
};

struct RunResult {
  RunStatus status = RunStatus::kError;
  std::int64_t iteration = 0;         // iterations completed
  std::int64_t resumed_from = -1;     // checkpoint iteration, or -1 for a fresh start
  std::string parameter_digest;       // 16 hex digits of FNV-1a over all parameters, equal on all ranks
  std::string message;                // what went wrong, for failures
};

// The synchronous-SGD loop: restore or broadcast, then per iteration agree on stop, forward/backward,
// average, apply, report; checkpoint every N, on stop and at the end. Reports an "exit" event.
RunResult run_training(Session& session, Trainable& trainable, const RunOptions& options);

// Helpers for Trainable implementations. Loading places the tensors on the device the module's (or the
// optimizer's) parameters are on, so a checkpoint written on a GPU resumes on a CPU and the reverse.
std::string serialize_module(torch::nn::Module& module);
void deserialize_module(torch::nn::Module& module, const std::string& bytes);
std::string serialize_optimizer(torch::optim::Optimizer& optimizer);
void deserialize_optimizer(torch::optim::Optimizer& optimizer, const std::string& bytes);
std::string parameter_digest(torch::nn::Module& module);

}  // namespace themis::worker
