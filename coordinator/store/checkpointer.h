#pragma once
// Syncs the coordinator's database off its loop. The coordinator's connection commits with
// synchronous=NORMAL and without automatic checkpoints, so no commit waits for the disk; every interval a
// second connection, on its own thread, checkpoints the WAL (PASSIVE: the writer is never blocked), which
// syncs the WAL and then the database file. A power loss therefore loses at most the transactions committed
// since the last checkpoint; a process crash loses nothing committed (docs/reliability.md "Durability").
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "coordinator/store/database.h"

namespace themis::store {

class Checkpointer {
 public:
  // Turns `db`'s automatic checkpoints off; `db` must outlive this.
  Checkpointer(Database& db, std::chrono::milliseconds interval);
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // Checkpoints that completed, and the last one's error ("" when it worked).
  std::uint64_t checkpoints() const { return checkpoints_; }
  std::string last_error() const;

 private:
  void run();
  void checkpoint();

  sqlite3* connection_ = nullptr;
  std::chrono::milliseconds interval_;
  std::atomic<std::uint64_t> checkpoints_{0};
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::string last_error_;
  std::thread thread_;
};

}  // namespace themis::store
