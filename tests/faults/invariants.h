#pragma once
// The invariants every fault test asserts after a fault (docs/reliability.md "Fault matrix"):
//   1. no app lost: every submitted app is in the database, once, and no other app appeared;
//   2. no GPU leased twice: at most one active lease per GPU;
//   3. every active lease is bound to a job that may hold it, and every started job holds its GPUs;
//   4. every live worker process of the cluster belongs to the current attempt of a job that holds a
//      lease on its GPU, or that is being stopped; no two attempts' workers share a GPU;
//   5. the database is consistent: integrity_check, foreign_key_check and the cross-table rules below.
// The database checks read one snapshot (one read transaction). The process checks poll: a worker that
// breaks rule 4 is reported only if it still does `worker_grace` later (a stop takes the app's grace period
// to land, and the database and /proc are not read at the same instant).
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace themis::faults {

struct InvariantInput {
  InvariantInput() = default;
  // Brace-initialisable like the aggregate it reads as: {db, apps, only_submitted, cluster_dir, grace}.
  InvariantInput(std::string db, std::vector<std::int64_t> apps, bool only_submitted = true, std::string dir = "",
                 std::chrono::milliseconds grace = std::chrono::milliseconds(15000))
      : db_path(std::move(db)),
        submitted_apps(std::move(apps)),
        only_submitted_apps(only_submitted),
        cluster_dir(std::move(dir)),
        worker_grace(grace) {}

  std::string db_path;                       // the coordinator's database, opened read-only
  std::vector<std::int64_t> submitted_apps;  // ids that themisctl submit returned
  bool only_submitted_apps = true;           // any other app in the database is a violation (a duplicate)
  // Workers are the processes whose stdout or stderr is a rank log under `cluster_dir`, as the nodelet
  // writes them: <cluster_dir>/<host>/jobs/<app>/<job>/attempt-<n>/rank-<r>.log (TestCluster's work
  // dirs). Empty: no process checks.
  std::string cluster_dir;
  std::chrono::milliseconds worker_grace{15000};
};

// Human-readable violations, empty when every invariant holds.
std::vector<std::string> check_invariants(const InvariantInput& input);

// One live process the nodelet started for a rank (or a process that rank started), from /proc.
struct WorkerProcess {
  int pid = 0;
  std::string host;
  std::int64_t app = 0;
  std::int64_t job = 0;
  std::int64_t attempt = 0;
  std::int64_t rank = 0;
  std::vector<int> devices;  // CUDA_VISIBLE_DEVICES: local GPU indices on `host`
};
std::vector<WorkerProcess> find_workers(const std::string& cluster_dir);

// A consistent copy of a live database (VACUUM INTO through a read-only connection), to keep or corrupt.
void copy_database(const std::string& db_path, const std::string& copy_path);

// The database rules alone (1, 2, 3, 5), for a database copy without processes.
std::vector<std::string> check_database(const InvariantInput& input);

}  // namespace themis::faults
