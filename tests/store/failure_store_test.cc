// Failed attempts and back-offs (coordinator/store/failure_store.h) on a real SQLite file.
#include <gtest/gtest.h>

#include <string>

#include "coordinator/store/database.h"
#include "coordinator/store/failure_store.h"
#include "tests/store/temp_dir.h"

namespace themis::store {
namespace {

class FailureStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.exec("INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, submitted_at) "
             "VALUES (1, 'a', 'alice', 'PENDING', '', 1, 2, 0)");
    db_.exec("INSERT INTO jobs(app_id, job, state, command, state_since) VALUES (1, 0, 'PENDING', '[]', 5), "
             "(1, 1, 'PENDING', '[]', 0)");
  }
  FailedAttempt failed(std::int64_t job, std::int64_t attempt, const std::string& failure_class) {
    return {1, job, attempt, 10.0 + static_cast<double>(attempt), failure_class, 1, std::nullopt, "exit 1", "retry",
            100.0, "retry 1 of 3"};
  }
  std::string column(const std::string& sql) {
    auto st = db_.prepare(sql);
    EXPECT_TRUE(st.step()) << sql;
    return st.text(0);
  }
  testing::TempDir dir_;
  Database db_{dir_.file("t.db")};
  FailureStore failures_{db_};
};

TEST_F(FailureStoreTest, CountsOnlyEarlierAttemptsOfTheSameJobAndClass) {
  failures_.replace_attempt(failed(0, 1, "communication"));
  failures_.replace_attempt(failed(0, 2, "out_of_memory"));
  failures_.replace_attempt(failed(0, 3, "communication"));
  failures_.replace_attempt(failed(1, 1, "communication"));  // another job
  EXPECT_EQ(failures_.earlier_failures(1, 0, "communication", 4), 2);
  EXPECT_EQ(failures_.earlier_failures(1, 0, "communication", 3), 1);  // not the attempt itself
  EXPECT_EQ(failures_.earlier_failures(1, 0, "out_of_memory", 4), 1);
  EXPECT_EQ(failures_.earlier_failures(1, 0, "user_error", 4), 0);
  EXPECT_EQ(failures_.earlier_failures(1, 1, "communication", 4), 1);
}

TEST_F(FailureStoreTest, AnAttemptKeepsOneRowWithItsLatestClass) {
  EXPECT_FALSE(failures_.attempt_class(1, 0, 1));
  failures_.replace_attempt(failed(0, 1, "communication"));
  failures_.replace_attempt(failed(0, 1, "out_of_memory"));  // a later rank names a better cause
  EXPECT_EQ(failures_.attempt_class(1, 0, 1), "out_of_memory");
  EXPECT_EQ(column("SELECT count(*) || ' ' || retry_at || ' ' || exit_code || ' ' || coalesce(exit_signal, '-') "
                   "FROM job_failures WHERE app_id = 1 AND job = 0"),
            "1 100.0 1 -");
  failures_.record_preemption(1, 0, 2, 20);
  EXPECT_EQ(failures_.attempt_class(1, 0, 2), "preemption");
  EXPECT_EQ(failures_.job_state_since(1, 0), 5.0);
  EXPECT_FALSE(failures_.job_state_since(1, 7));
}

TEST_F(FailureStoreTest, ABackOffEndsWhenItIsDue) {
  failures_.set_job_failure(1, 0, "communication: exit 1", 50.0);
  failures_.set_job_failure(1, 1, "communication: exit 1", 80.0);
  EXPECT_EQ(failures_.backoffs_due(49), 0);
  EXPECT_EQ(failures_.backoffs_due(60), 1);
  EXPECT_EQ(failures_.pending_backoffs_due(60), (std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 0}}));
  failures_.release_backoffs(60);
  EXPECT_EQ(column("SELECT reason || ' ' || coalesce(retry_at, '-') || ' ' || failure FROM jobs WHERE job = 0"),
            "Retry - communication: exit 1");
  EXPECT_EQ(column("SELECT reason || ' ' || retry_at FROM jobs WHERE job = 1"), "New 80.0");  // not due yet
}

}  // namespace
}  // namespace themis::store
