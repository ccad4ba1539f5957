// A child process writes to the database and is killed with SIGKILL in the middle of a transaction:
// what it committed is there after reopening, what it had not committed is not, and the file is intact.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coordinator/store/database.h"
#include "tests/store/temp_dir.h"

namespace themis::store {
namespace {

TEST(CrashRecovery, KilledMidTransactionLosesNothingCommitted) {
  testing::TempDir dir;
  const std::string path = dir.file("crash.db");
  { Database create(path); }
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    Database db(path);
    for (int i = 0; i < 50; ++i) {  // 50 committed rounds, one transaction each
      Database::Transaction tx(db);
      db.prepare("INSERT INTO rounds(id, started_at, finished_at, trigger, policy, free_gpus, apps, granted, idle, outcome) "
                 "VALUES (?, 0, 0, 'committed', 'p', 0, 0, 0, 0, '{}')")
          .bind(1, i + 1)
          .run();
      db.prepare("INSERT INTO events(ts, kind, round_id, message) VALUES (0, 'Round', ?, 'committed')").bind(1, i + 1).run();
      tx.commit();
    }
    Database::Transaction tx(db);  // never committed
    for (int i = 0; i < 1000; ++i) {
      db.prepare("INSERT INTO events(ts, kind, message) VALUES (0, 'Uncommitted', 'lost')").run();
    }
    const char byte = 'x';
    (void)::write(ready[1], &byte, 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  Database db(path);
  auto count = [&](const char* sql) {
    auto st = db.prepare(sql);
    st.step();
    return st.int64(0);
  };
  EXPECT_EQ(count("SELECT count(*) FROM rounds"), 50);
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE kind = 'Round'"), 50);
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE kind = 'Uncommitted'"), 0);
  auto check = db.prepare("PRAGMA integrity_check");
  ASSERT_TRUE(check.step());
  EXPECT_EQ(check.text(0), "ok");
  // And the database takes writes again.
  db.exec("INSERT INTO events(ts, kind, message) VALUES (0, 'After', 'ok')");
}

}  // namespace
}  // namespace themis::store
