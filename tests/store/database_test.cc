#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/store/checkpointer.h"
#include "coordinator/store/database.h"
#include "coordinator/store/migrations.h"
#include "tests/store/temp_dir.h"

namespace themis::store {
namespace {

std::int64_t scalar(Database& db, const std::string& sql) {
  auto st = db.prepare(sql);
  EXPECT_TRUE(st.step()) << sql;
  return st.int64(0);
}

std::string text(Database& db, const std::string& sql) {
  auto st = db.prepare(sql);
  EXPECT_TRUE(st.step()) << sql;
  return st.text(0);
}

void add_host_and_app(Database& db) {
  db.exec("INSERT INTO hosts(id, name, rack, state, first_gpu, gpu_count, registered_at, last_heartbeat) "
          "VALUES (1, 'n1', 'r1', 'up', 0, 2, 0, 0)");
  db.exec("INSERT INTO gpus(gpu, host_id, local_index, slot) VALUES (0, 1, 0, 0), (1, 1, 1, 0)");
  db.exec("INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, submitted_at) "
          "VALUES (1, 'a', 'alice', 'RUNNING', '', 1, 1, 0)");
  db.exec("INSERT INTO jobs(app_id, job, state, command, state_since) VALUES (1, 0, 'RUNNING', '[]', 0)");
  db.exec("INSERT INTO rounds(id, started_at, finished_at, trigger, policy, free_gpus, apps, granted, idle, outcome) "
          "VALUES (1, 0, 0.002, 't', 'p', 2, 1, 1, 1, '{}')");
}

TEST(Database, NewDatabaseHasCurrentSchemaAndSettings) {
  testing::TempDir dir;
  Database db(dir.file("t.db"));
  EXPECT_EQ(db.user_version(), kSchemaVersion);
  EXPECT_EQ(static_cast<int>(migrations().size()), kSchemaVersion);
  EXPECT_EQ(text(db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(scalar(db, "PRAGMA foreign_keys"), 1);
  EXPECT_EQ(scalar(db, "PRAGMA synchronous"), 1);  // NORMAL: in WAL mode a crash of the process loses nothing committed
  EXPECT_EQ(scalar(db, "PRAGMA application_id"), 0x54484D53);
  for (const char* view : {"leases_active", "apps_rho", "rounds_recent", "gpu_utilisation"}) {
    EXPECT_EQ(scalar(db, std::string("SELECT count(*) FROM sqlite_master WHERE type='view' AND name='") + view + "'"), 1)
        << view;
  }
}

TEST(Database, ReopeningDoesNotMigrateAgainAndKeepsData) {
  testing::TempDir dir;
  {
    Database db(dir.file("t.db"));
    add_host_and_app(db);
  }
  Database db(dir.file("t.db"));
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM apps"), 1);
  EXPECT_FALSE(std::filesystem::exists(dir.file("t.db.pre-v1")));
}

TEST(Database, RefusesADatabaseFromANewerVersion) {
  testing::TempDir dir;
  {
    Database db(dir.file("t.db"));
    db.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion + 1));
  }
  try {
    Database db(dir.file("t.db"));
    FAIL() << "opened a newer schema";
  } catch (const DatabaseError& e) {
    EXPECT_NE(std::string(e.what()).find("newer than this binary"), std::string::npos) << e.what();
  }
}

TEST(Database, MigratesAVersion4DatabaseToSubmitTokensUniquePerOwner) {
  testing::TempDir dir;
  {
    // A database as a version-4 coordinator left it, with one app.
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(dir.file("t.db").c_str(), &raw), SQLITE_OK);
    for (std::size_t v = 0; v < 4; ++v) ASSERT_EQ(sqlite3_exec(raw, migrations()[v].c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << v;
    ASSERT_EQ(sqlite3_exec(raw,
                           "INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, submitted_at) "
                           "VALUES (1, 'old', 'alice', 'PENDING', 's', 1, 1, 0); PRAGMA user_version=4;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
  }
  Database db(dir.file("t.db"));
  EXPECT_EQ(db.user_version(), kSchemaVersion);
  EXPECT_TRUE(std::filesystem::exists(dir.file("t.db.pre-v5")));
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM apps WHERE id = 1 AND name = 'old' AND submit_token IS NULL"), 1);
  auto insert = [&](int id, const std::string& owner, const std::string& token) {
    db.exec("INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, submitted_at, submit_token) "
            "VALUES (" + std::to_string(id) + ", 'a', '" + owner + "', 'PENDING', 's', 1, 1, 0, " + token + ")");
  };
  insert(2, "alice", "'t1'");
  EXPECT_THROW(insert(3, "alice", "'t1'"), DatabaseError);  // one app per (owner, token)
  insert(4, "bob", "'t1'");                                  // another owner's token is another key
  insert(5, "alice", "NULL");                                // no token: never deduplicated
  insert(6, "alice", "NULL");
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM apps"), 5);
}

std::vector<std::string> view_columns(Database& db, const std::string& view) {
  auto st = db.prepare("SELECT * FROM " + view + " LIMIT 0");
  std::vector<std::string> names;
  for (int c = 0; c < st.columns(); ++c) names.push_back(st.column_name(c));
  return names;
}

TEST(Database, MigratesAVersion5DatabaseToRoundsWithTheWorstLoopLag) {
  testing::TempDir dir;
  {
    // A database as a version-5 coordinator left it, with one round.
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(dir.file("t.db").c_str(), &raw), SQLITE_OK);
    for (std::size_t v = 0; v < 5; ++v) ASSERT_EQ(sqlite3_exec(raw, migrations()[v].c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << v;
    ASSERT_EQ(sqlite3_exec(raw,
                           "INSERT INTO rounds(id, started_at, finished_at, trigger, policy, free_gpus, apps, granted, idle, outcome) "
                           "VALUES (1, 0, 0.002, 't', 'p', 2, 1, 1, 1, '{}'); PRAGMA user_version=5;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
  }
  Database db(dir.file("t.db"));
  EXPECT_EQ(db.user_version(), kSchemaVersion);
  EXPECT_TRUE(std::filesystem::exists(dir.file("t.db.pre-v6")));
  // The old round keeps its data and has no lag (it was not measured).
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM rounds WHERE id = 1 AND granted = 1 AND worst_loop_lag_ms IS NULL"), 1);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM rounds_recent WHERE round = 1 AND duration_ms = 2 AND worst_loop_lag_ms IS NULL"), 1);
  // rounds_recent is an interface: its columns stay, in order, and the new one is appended.
  EXPECT_EQ(view_columns(db, "rounds_recent"),
            (std::vector<std::string>{"round", "started", "duration_ms", "trigger", "policy", "free_gpus", "apps", "granted",
                                      "idle", "outcome", "worst_loop_lag_ms"}));
  db.exec("UPDATE rounds SET worst_loop_lag_ms = 8123.6 WHERE id = 1");
  EXPECT_EQ(scalar(db, "SELECT worst_loop_lag_ms FROM rounds_recent WHERE round = 1"), 8124);  // whole milliseconds
}

TEST(Database, CommitClockCountsTransactionsAndWritesOutsideThem) {
  testing::TempDir dir;
  Database db(dir.file("t.db"));
  const auto before = db.commit_clock();
  db.prepare("SELECT count(*) FROM apps").run();  // a read commits nothing
  EXPECT_EQ(db.commit_clock().commits, before.commits);
  db.prepare("INSERT INTO events(ts, kind, message) VALUES (1, 'Test', 'outside')").run();
  EXPECT_EQ(db.commit_clock().commits, before.commits + 1);
  {
    Database::Transaction tx(db);
    db.prepare("INSERT INTO events(ts, kind, message) VALUES (2, 'Test', 'inside')").run();
    db.prepare("INSERT INTO events(ts, kind, message) VALUES (3, 'Test', 'inside')").run();
    EXPECT_EQ(db.commit_clock().commits, before.commits + 1);  // writes inside a transaction commit with it
    tx.commit();
  }
  EXPECT_EQ(db.commit_clock().commits, before.commits + 2);
  EXPECT_GT(db.commit_clock().seconds, before.seconds);
}

TEST(Checkpointer, CommittedRowsReachTheDatabaseFileWithinAnInterval) {
  testing::TempDir dir;
  Database db(dir.file("t.db"));
  Checkpointer checkpointer(db, std::chrono::milliseconds(50));
  const auto before = checkpointer.checkpoints();
  db.exec("INSERT INTO events(ts, kind, message) VALUES (1, 'Test', 'synced')");
  // Without a checkpoint the row is only in t.db-wal (automatic checkpoints wait for 1000 pages): a copy of
  // the database file alone, as a power loss could leave it, would lack it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (checkpointer.checkpoints() < before + 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(checkpointer.checkpoints(), before + 2) << checkpointer.last_error();
  EXPECT_EQ(checkpointer.last_error(), "");
  std::filesystem::copy_file(dir.file("t.db"), dir.file("file-only.db"));
  Database copy(dir.file("file-only.db"));
  EXPECT_EQ(scalar(copy, "SELECT count(*) FROM events WHERE message = 'synced'"), 1);
}

TEST(Checkpointer, TurnsTheWritersAutomaticCheckpointsOff) {
  testing::TempDir dir;
  Database db(dir.file("t.db"));
  {
    const Checkpointer checkpointer(db, std::chrono::hours(1));
    // The writer's commits never checkpoint (and sync) themselves: sqlite3_wal_autocheckpoint(db, 0).
    for (int i = 0; i < 1200; ++i) {
      db.prepare("INSERT INTO events(ts, kind, message) VALUES (?, 'Test', ?)").bind(1, i).bind(2, std::string(4000, 'x')).run();
    }
    std::filesystem::copy_file(dir.file("t.db"), dir.file("file-only.db"));
  }
  Database copy(dir.file("file-only.db"));
  EXPECT_EQ(scalar(copy, "SELECT count(*) FROM events"), 0);
}

TEST(Database, EventsAreAppendOnly) {
  testing::TempDir dir;
  Database db(dir.file("t.db"));
  db.exec("INSERT INTO events(ts, kind, message) VALUES (1, 'Test', 'x')");
  EXPECT_THROW(db.exec("UPDATE events SET message = 'y'"), DatabaseError);
  EXPECT_THROW(db.exec("DELETE FROM events"), DatabaseError);
  EXPECT_EQ(text(db, "SELECT message FROM events"), "x");
}

TEST(Database, OneActiveLeasePerGpuAndForeignKeysEnforced) {
  testing::TempDir dir;
  Database db(dir.file("t.db"));
  add_host_and_app(db);
  db.exec("INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state) VALUES (0, 1, 0, 1, 0, 10, 'active')");
  EXPECT_THROW(db.exec("INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state) VALUES (0, 1, 0, 1, 0, 10, 'active')"),
               DatabaseError);
  db.exec("INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state) VALUES (0, 1, 0, 1, 0, 10, 'released')");
  EXPECT_THROW(db.exec("INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state) VALUES (9, 1, 0, 1, 0, 10, 'active')"),
               DatabaseError);  // no such GPU
  EXPECT_THROW(db.exec("INSERT INTO jobs(app_id, job, state, command, state_since) VALUES (7, 0, 'PENDING', '[]', 0)"),
               DatabaseError);  // no such app
}

TEST(Database, TransactionRollsBackUnlessCommitted) {
  testing::TempDir dir;
  Database db(dir.file("t.db"));
  {
    Database::Transaction tx(db);
    db.exec("INSERT INTO events(ts, kind, message) VALUES (1, 'A', 'rolled back')");
  }
  {
    Database::Transaction tx(db);
    db.exec("INSERT INTO events(ts, kind, message) VALUES (1, 'B', 'kept')");
    tx.commit();
  }
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM events"), 1);
  EXPECT_EQ(text(db, "SELECT kind FROM events"), "B");
}

TEST(Database, ReadOnlyConnectionReadsWhileWriterOpenAndAfterItCloses) {
  testing::TempDir dir;
  {
    Database writer(dir.file("t.db"));
    add_host_and_app(writer);
    Database reader(dir.file("t.db"), /*read_only=*/true);
    EXPECT_EQ(scalar(reader, "SELECT count(*) FROM apps_rho"), 1);
    EXPECT_THROW(reader.exec("DELETE FROM gpus"), DatabaseError);
  }
  // The writer keeps -wal/-shm on close (PERSIST_WAL), so a read-only reader still opens the file.
  EXPECT_TRUE(std::filesystem::exists(dir.file("t.db-wal")));
  Database reader(dir.file("t.db"), /*read_only=*/true);
  EXPECT_EQ(scalar(reader, "SELECT count(*) FROM gpu_utilisation"), 1);
}

TEST(Database, ErrorsNameTheFileAndStatement) {
  testing::TempDir dir;
  Database db(dir.file("t.db"));
  try {
    db.exec("SELECT * FROM no_such_table");
    FAIL();
  } catch (const DatabaseError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_table"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("t.db"), std::string::npos);
  }
}

}  // namespace
}  // namespace themis::store
