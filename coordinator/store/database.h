#pragma once
// A thin, exception-throwing wrapper over one SQLite connection, with the coordinator's settings:
// WAL (kept on close so read-only readers keep working), synchronous=NORMAL (a commit does not wait for the
// disk; the coordinator syncs with a store::Checkpointer), busy_timeout, foreign keys,
// application_id 'THMS', and schema migrations by PRAGMA user_version (store/migrations.cc).
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace themis::store {

class DatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Time spent committing writes: COMMIT of a Transaction, and statements that write outside one (they
// commit as they run). The coordinator's loop reports it per iteration (docs/admin.md "Loop health").
struct CommitClock {
  double seconds = 0;
  std::uint64_t commits = 0;
};

class Statement {
 public:
  // `clock`, when given, counts the time of a write that runs outside a transaction.
  Statement(sqlite3* db, std::string_view sql, CommitClock* clock = nullptr);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;

  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Statement& bind_null(int index);
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  template <typename... Args>
  Statement& bind_all(const Args&... args) {
    int index = 0;
    (bind(++index, args), ...);
    return *this;
  }

  // True while a row is available.
  bool step();
  // Runs to completion; returns the number of rows changed.
  int run();
  void reset();

  bool is_null(int column) const;
  std::int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  int columns() const;
  int type(int column) const;  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL
  std::string column_name(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  CommitClock* clock_ = nullptr;
};

class Database {
 public:
  // Opens (creating and migrating if needed) the coordinator's database. read_only opens with
  // mode=ro and PRAGMA query_only, and never migrates.
  explicit Database(const std::string& path, bool read_only = false);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(std::string_view sql);
  // Lets SQLite refresh its query-planner statistics; worth running before closing a long-lived connection.
  void optimize() { exec("PRAGMA optimize"); }
  Statement prepare(std::string_view sql) { return Statement(db_, sql, &commit_clock_); }
  std::int64_t last_insert_id() const;
  int user_version();
  sqlite3* handle() { return db_; }
  const std::string& path() const { return path_; }
  const CommitClock& commit_clock() const { return commit_clock_; }

  // BEGIN IMMEDIATE ... COMMIT; rolls back if destroyed uncommitted.
  class Transaction {
   public:
    explicit Transaction(Database& db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

   private:
    Database& db_;
    bool done_ = false;
  };

  // One consistent view for a series of reads (a deferred transaction, ended on destruction): the writer's
  // commits in between are not seen half-way. For a second connection (query_only), e.g. the HTTP server's.
  class ReadSnapshot {
   public:
    explicit ReadSnapshot(Database& db);
    ~ReadSnapshot();
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;

   private:
    Database& db_;
  };

 private:
  void migrate();
  sqlite3* db_ = nullptr;
  std::string path_;
  CommitClock commit_clock_;
};

inline constexpr int kSchemaVersion = 10;

}  // namespace themis::store
