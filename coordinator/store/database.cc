#include "coordinator/store/database.h"

#include <chrono>
#include <filesystem>

#include "coordinator/store/migrations.h"

namespace themis::store {

namespace {
[[noreturn]] void fail(sqlite3* db, std::string_view what) {
  throw DatabaseError(std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

// Adds the time from its construction to its end to a CommitClock (none: nothing).
class CommitTimer {
 public:
  explicit CommitTimer(CommitClock* clock) : clock_(clock), start_(std::chrono::steady_clock::now()) {}
  ~CommitTimer() {
    if (!clock_) return;
    clock_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    ++clock_->commits;
  }
  CommitTimer(const CommitTimer&) = delete;
  CommitTimer& operator=(const CommitTimer&) = delete;

 private:
  CommitClock* clock_;
  std::chrono::steady_clock::time_point start_;
};
}  // namespace

Statement::Statement(sqlite3* db, std::string_view sql, CommitClock* clock) : db_(db), clock_(clock) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK) {
    fail(db, "prepare '" + std::string(sql.substr(0, 80)) + "'");
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_), clock_(other.clock_) {
  other.stmt_ = nullptr;
}

Statement& Statement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) fail(db_, "bind");
  return *this;
}
Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) fail(db_, "bind");
  return *this;
}
Statement& Statement::bind(int index, std::string_view value) {
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT) != SQLITE_OK) {
    fail(db_, "bind");
  }
  return *this;
}
Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) fail(db_, "bind");
  return *this;
}

bool Statement::step() {
  // A write outside a transaction commits (and syncs) before sqlite3_step returns.
  const bool commits = clock_ && sqlite3_get_autocommit(db_) && !sqlite3_stmt_readonly(stmt_);
  const int rc = [&] {
    const CommitTimer timer(commits ? clock_ : nullptr);
    return sqlite3_step(stmt_);
  }();
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, "step '" + std::string(sqlite3_sql(stmt_)).substr(0, 80) + "'");
}

int Statement::run() {
  while (step()) {
  }
  return sqlite3_changes(db_);
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
std::int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }
std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
           : std::string();
}
int Statement::type(int column) const { return sqlite3_column_type(stmt_, column); }
int Statement::columns() const { return sqlite3_column_count(stmt_); }
std::string Statement::column_name(int column) const { return sqlite3_column_name(stmt_, column); }

Database::Database(const std::string& path, bool read_only) : path_(path) {
  const int flags = read_only ? (SQLITE_OPEN_READONLY | SQLITE_OPEN_URI)
                              : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI);
  const std::string uri = read_only ? "file:" + path + "?mode=ro" : path;
  if (sqlite3_open_v2(uri.c_str(), &db_, flags | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw DatabaseError(path + ": cannot open database: " + message);
  }
  sqlite3_busy_timeout(db_, 5000);
  if (read_only) {
    exec("PRAGMA query_only=ON");
    return;
  }
  int persist = 1;  // keep -wal/-shm on close so read-only readers can still open the database
  sqlite3_file_control(db_, nullptr, SQLITE_FCNTL_PERSIST_WAL, &persist);
  exec("PRAGMA journal_mode=WAL");
  // In WAL mode: a commit is not synced, a checkpoint is (WAL, then the database file). A process crash loses
  // nothing committed; a power loss may lose what was committed since the last checkpoint, never consistency.
  exec("PRAGMA synchronous=NORMAL");
  exec("PRAGMA foreign_keys=ON");
  migrate();
}

Database::~Database() {
  if (db_) sqlite3_close_v2(db_);
}

void Database::exec(std::string_view sql) {
  char* error = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw DatabaseError(path_ + ": " + message + " (in '" + text.substr(0, 80) + "')");
  }
}

std::int64_t Database::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

int Database::user_version() {
  auto st = prepare("PRAGMA user_version");
  st.step();
  return static_cast<int>(st.int64(0));
}

void Database::migrate() {
  const int current = user_version();
  const auto& steps = migrations();
  if (current > static_cast<int>(steps.size())) {
    throw DatabaseError(path_ + ": schema version " + std::to_string(current) + " is newer than this binary knows (" +
                        std::to_string(steps.size()) + "); refusing to start (downgrade protection)");
  }
  for (int version = current + 1; version <= static_cast<int>(steps.size()); ++version) {
    if (current > 0) {
      // A copy of the database before each migration of existing data.
      const std::string backup = path_ + ".pre-v" + std::to_string(version);
      std::filesystem::remove(backup);
      exec("VACUUM INTO '" + backup + "'");
    }
    Transaction tx(*this);
    exec(steps[static_cast<std::size_t>(version - 1)]);
    exec("PRAGMA user_version=" + std::to_string(version));
    tx.commit();
  }
  exec("PRAGMA application_id=1414024531");  // 0x54484D53 'THMS'
}

Database::Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Database::Transaction::~Transaction() {
  if (!done_) {
    sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Database::Transaction::commit() {
  const CommitTimer timer(&db_.commit_clock_);
  db_.exec("COMMIT");
  done_ = true;
}

Database::ReadSnapshot::ReadSnapshot(Database& db) : db_(db) { db_.exec("BEGIN"); }

// A read-only transaction has nothing to lose: COMMIT only ends it, and a failure to end it is not thrown
// from a destructor (the next BEGIN on this connection would report it).
Database::ReadSnapshot::~ReadSnapshot() { sqlite3_exec(db_.handle(), "COMMIT", nullptr, nullptr, nullptr); }

}  // namespace themis::store
