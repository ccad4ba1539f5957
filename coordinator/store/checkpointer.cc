#include "coordinator/store/checkpointer.h"

namespace themis::store {

Checkpointer::Checkpointer(Database& db, std::chrono::milliseconds interval) : interval_(interval) {
  if (sqlite3_open_v2(db.path().c_str(), &connection_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    const std::string message = connection_ ? sqlite3_errmsg(connection_) : "out of memory";
    sqlite3_close(connection_);
    throw DatabaseError(db.path() + ": cannot open the checkpoint connection: " + message);
  }
  int persist = 1;  // as the coordinator's connection: -wal/-shm stay for read-only readers
  sqlite3_file_control(connection_, nullptr, SQLITE_FCNTL_PERSIST_WAL, &persist);
  // A connection learns that the database is in WAL mode at its first read; until then a checkpoint does nothing.
  if (sqlite3_exec(connection_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) != SQLITE_OK) {
    const std::string message = sqlite3_errmsg(connection_);
    sqlite3_close(connection_);
    throw DatabaseError(db.path() + ": checkpoint connection: " + message);
  }
  sqlite3_wal_autocheckpoint(db.handle(), 0);
  thread_ = std::thread([this] { run(); });
}

Checkpointer::~Checkpointer() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  checkpoint();  // what the loop committed since the last one
  sqlite3_close_v2(connection_);
}

std::string Checkpointer::last_error() const {
  const std::lock_guard lock(mutex_);
  return last_error_;
}

void Checkpointer::run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) {
    lock.unlock();
    checkpoint();
    lock.lock();
  }
}

void Checkpointer::checkpoint() {
  const int rc = sqlite3_wal_checkpoint_v2(connection_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  const std::string error = rc == SQLITE_OK ? "" : sqlite3_errmsg(connection_);
  if (rc == SQLITE_OK) ++checkpoints_;
  const std::lock_guard lock(mutex_);
  last_error_ = error;
}

}  // namespace themis::store
