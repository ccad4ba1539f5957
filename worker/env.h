#pragma once
// The worker's environment contract. themis variables win; torchrun's are accepted as fallbacks.
//
//   THEMIS_RANK (or RANK)                 this process's rank, 0 <= rank < world size     default 0
//   THEMIS_WORLD_SIZE (or WORLD_SIZE)     number of ranks                                 default 1
//   THEMIS_RENDEZVOUS                     tcp://<host>:<port> (rank 0 serves a TCPStore there) or
//                                         file://<absolute path> (a FileStore on a shared filesystem);
//                                         else tcp://MASTER_ADDR:MASTER_PORT; else, for world size 1 only,
//                                         a private file store
//   THEMIS_JOB_ID                         job name in reports                             default "local"
//   THEMIS_ATTEMPT                        restart count (informational; resume is automatic)
//   THEMIS_CHECKPOINT_DIR                 checkpoint directory (read and written by rank 0)
//   THEMIS_REPORT_ENDPOINT                ZeroMQ endpoint of the launcher's PULL socket; unset: stdout
//   THEMIS_REPORT_SERVER_KEY              CURVE (Z85): the report socket's public key, and this rank's
//   THEMIS_REPORT_PUBLIC_KEY              public and secret key; all three or none (none: no CURVE, as a
//   THEMIS_REPORT_SECRET_KEY              launcher in the loopback-only insecure mode binds it)
//   THEMIS_COMM_TIMEOUT_S                 a collective stuck this long fails the job       default 60
//   THEMIS_RENDEZVOUS_TIMEOUT_S           waiting for all ranks to join                   default 300
//   THEMIS_DIST_BACKEND                   gloo (CPU) | nccl (cuda:0, needs a CUDA LibTorch) default gloo
//   GLOO_SOCKET_IFNAME                    network interface for Gloo (multi-host)
#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace themis::worker {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Rendezvous {
  enum class Kind { kTcp, kFile } kind = Kind::kFile;
  std::string host;  // kTcp
  int port = 0;      // kTcp
  std::string path;  // kFile
};

// The keys a rank presents to its launcher's CURVE report socket (launcher/report_security.h).
struct ReportCurveKeys {
  std::string server_key;  // the socket's public key
  std::string public_key;
  std::string secret_key;
  bool empty() const { return server_key.empty(); }
};

struct WorkerEnv {
  int rank = 0;
  int world_size = 1;
  Rendezvous rendezvous;
  std::string job_id = "local";
  int attempt = 0;
  std::string checkpoint_dir;   // empty: no checkpoints
  std::string report_endpoint;  // empty: JSON lines on stdout
  ReportCurveKeys report_keys;  // empty: the report socket has no CURVE
  std::string backend = "gloo";  // gloo | nccl
  std::string gloo_interface;   // empty: derived from the rendezvous host
  std::chrono::seconds comm_timeout{60};
  std::chrono::seconds rendezvous_timeout{300};
};

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Reads the variables above; throws ConfigError naming the variable and what is wrong with it.
WorkerEnv worker_env_from(const EnvLookup& lookup);
WorkerEnv worker_env_from_process();

// "tcp://10.0.0.5:29500" or "file:///shared/rdzv/42_3-attempt-2"; throws ConfigError.
Rendezvous parse_rendezvous(const std::string& spec);

}  // namespace themis::worker
