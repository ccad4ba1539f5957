// The job and app state machines (coordinator/lifecycle.h) and their one writer on a real SQLite file.
#include <gtest/gtest.h>

#include <string>

#include "coordinator/lifecycle.h"
#include "coordinator/store/database.h"
#include "coordinator/store/state_store.h"
#include "tests/store/temp_dir.h"

namespace themis::store {
namespace {

using coordinator::JobEvent;
using coordinator::JobState;
using coordinator::AppState;

TEST(Lifecycle, NamesRoundTripAsStored) {
  for (JobState s : {JobState::kPending, JobState::kStarting, JobState::kRunning, JobState::kStopping,
                     JobState::kCompleted, JobState::kFailed, JobState::kCancelled}) {
    EXPECT_EQ(coordinator::job_state_named(coordinator::to_string(s)), s);
  }
  EXPECT_EQ(coordinator::to_string(JobState::kStopping), "STOPPING");
  EXPECT_EQ(coordinator::to_string(AppState::kCancelled), "CANCELLED");
  EXPECT_FALSE(coordinator::job_state_named("Running"));
  EXPECT_FALSE(coordinator::app_state_named("STOPPING"));  // an app has no stopping state
}

TEST(Lifecycle, EachEventMovesOnlyFromItsSources) {
  using coordinator::next_state;
  EXPECT_EQ(next_state(JobState::kPending, JobEvent::kStarted), JobState::kStarting);
  EXPECT_FALSE(next_state(JobState::kRunning, JobEvent::kStarted));  // a running job is never launched again
  EXPECT_FALSE(next_state(JobState::kCompleted, JobEvent::kStarted));
  EXPECT_EQ(next_state(JobState::kCompleted, JobEvent::kRelaunched), JobState::kStarting);
  EXPECT_EQ(next_state(JobState::kFailed, JobEvent::kRelaunched), JobState::kStarting);
  EXPECT_FALSE(next_state(JobState::kCancelled, JobEvent::kRelaunched));
  EXPECT_EQ(next_state(JobState::kStarting, JobEvent::kWorkersUp), JobState::kRunning);
  EXPECT_FALSE(next_state(JobState::kStopping, JobEvent::kWorkersUp));  // a late report does not revive a stop
  EXPECT_EQ(next_state(JobState::kRunning, JobEvent::kStopSent), JobState::kStopping);
  EXPECT_FALSE(next_state(JobState::kPending, JobEvent::kStopSent));
  EXPECT_EQ(next_state(JobState::kRunning, JobEvent::kSucceeded), JobState::kCompleted);
  EXPECT_FALSE(next_state(JobState::kStopping, JobEvent::kSucceeded));  // a stopped job's exits end its stop
  EXPECT_EQ(next_state(JobState::kRunning, JobEvent::kRetried), JobState::kPending);
  EXPECT_EQ(next_state(JobState::kPending, JobEvent::kFailed), JobState::kFailed);
  EXPECT_EQ(next_state(JobState::kPending, JobEvent::kCancelled), JobState::kCancelled);
  EXPECT_FALSE(next_state(JobState::kRunning, JobEvent::kCancelled));  // a running job is stopped, then ends
  EXPECT_EQ(next_state(JobState::kCompleted, JobEvent::kDropped), JobState::kCompleted);
  EXPECT_FALSE(next_state(JobState::kRunning, JobEvent::kDropped));
  // No event moves a job out of an end state but kDropped's COMPLETED → COMPLETED and a launcher's kRelaunched.
  for (JobEvent e : {JobEvent::kStarted, JobEvent::kWorkersUp, JobEvent::kStopSent, JobEvent::kStopped,
                     JobEvent::kSucceeded, JobEvent::kRetried, JobEvent::kFailed, JobEvent::kCancelled}) {
    for (JobState s : {JobState::kCompleted, JobState::kFailed, JobState::kCancelled}) {
      EXPECT_FALSE(next_state(s, e)) << coordinator::to_string(s);
    }
  }
}

TEST(Lifecycle, AStopEndsByItsReason) {
  using coordinator::next_state;
  EXPECT_EQ(next_state(JobState::kStopping, JobEvent::kStopped, "Cancelled"), JobState::kCancelled);
  EXPECT_EQ(next_state(JobState::kStopping, JobEvent::kStopped, "RankFailed"), JobState::kFailed);
  EXPECT_EQ(next_state(JobState::kStopping, JobEvent::kStopped, "Preempted"), JobState::kPending);
  EXPECT_EQ(next_state(JobState::kRunning, JobEvent::kStopped, "NodeFail"), JobState::kPending);
  EXPECT_EQ(next_state(JobState::kStopping, JobEvent::kStopped, "Backoff"), JobState::kPending);
  EXPECT_FALSE(next_state(JobState::kPending, JobEvent::kStopped, "Cancelled"));
}

TEST(Lifecycle, AppStateFollowsItsJobs) {
  using coordinator::app_state_from_jobs;
  EXPECT_EQ(app_state_from_jobs({3, 1, 0, 0, 0}), AppState::kPending);
  EXPECT_EQ(app_state_from_jobs({3, 1, 0, 0, 1}), AppState::kRunning);
  EXPECT_EQ(app_state_from_jobs({3, 3, 0, 0, 0}), AppState::kCompleted);
  EXPECT_EQ(app_state_from_jobs({3, 2, 1, 0, 0}), AppState::kFailed);
  EXPECT_EQ(app_state_from_jobs({3, 1, 1, 1, 0}), AppState::kCancelled);  // a cancel names the end
  EXPECT_TRUE(coordinator::app_may_move(AppState::kRunning, AppState::kPending));
  EXPECT_FALSE(coordinator::app_may_move(AppState::kCompleted, AppState::kRunning));
}

class StateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.exec("INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, submitted_at) "
             "VALUES (1, 'a', 'alice', 'PENDING', '', 1, 2, 0)");
    db_.exec("INSERT INTO jobs(app_id, job, state, command, state_since) VALUES (1, 0, 'PENDING', '[]', 0), "
             "(1, 1, 'PENDING', '[]', 0), (1, 2, 'COMPLETED', '[]', 0)");
  }
  std::string column(const std::string& sql) {
    auto st = db_.prepare(sql);
    EXPECT_TRUE(st.step()) << sql;
    return st.text(0);
  }
  testing::TempDir dir_;
  Database db_{dir_.file("t.db")};
  StateStore states_{db_};
};

TEST_F(StateStoreTest, AJobGoesThroughItsLifeAndKeepsItsRecord) {
  ASSERT_TRUE(states_.start_job(1, 0, std::nullopt, "[4,5]", 10));
  EXPECT_EQ(states_.job_state(1, 0), JobState::kStarting);
  EXPECT_EQ(column("SELECT attempt || ' ' || placement FROM jobs WHERE app_id = 1 AND job = 0"), "1 [4,5]");
  EXPECT_FALSE(states_.start_job(1, 0, std::nullopt, "[6]", 11));  // already started: nothing is written
  EXPECT_EQ(column("SELECT placement FROM jobs WHERE app_id = 1 AND job = 0"), "[4,5]");
  ASSERT_TRUE(states_.move_job(1, 0, JobEvent::kWorkersUp, "", 12));
  ASSERT_TRUE(states_.move_job(1, 0, JobEvent::kSucceeded, "Done", 13));
  EXPECT_EQ(column("SELECT state || ' ' || reason || ' ' || placement || ' ' || state_since FROM jobs "
                   "WHERE app_id = 1 AND job = 0"),
            "COMPLETED Done [4,5] 13.0");
}

TEST_F(StateStoreTest, OnlyALauncherRelaunchesAnEndedJob) {
  // Successive halving runs a completed job again for its next phase: kRelaunched, never kStarted.
  EXPECT_FALSE(states_.start_job(1, 2, 2, "[1]", 10));
  EXPECT_EQ(states_.job_state(1, 2), JobState::kCompleted);
  ASSERT_TRUE(states_.start_job(1, 2, 2, "[1]", 10, JobEvent::kRelaunched));
  EXPECT_EQ(column("SELECT state || ' ' || attempt || ' ' || placement FROM jobs WHERE app_id = 1 AND job = 2"),
            "STARTING 2 [1]");
  EXPECT_FALSE(states_.start_job(1, 0, 1, "[0]", 11, JobEvent::kRelaunched));  // a pending job is started, not relaunched
  EXPECT_FALSE(states_.start_job(1, 0, 1, "[0]", 11, JobEvent::kStopSent));     // not a start at all
}

TEST_F(StateStoreTest, AStoppedJobWaitsAgainWithoutItsGpusAndAnIllegalMoveWritesNothing) {
  ASSERT_TRUE(states_.start_job(1, 0, 3, "[4]", 10));
  ASSERT_TRUE(states_.move_job(1, 0, JobEvent::kStopSent, "Preempted", 11));
  EXPECT_FALSE(states_.move_job(1, 0, JobEvent::kWorkersUp, "", 12));  // a late "workers up" changes nothing
  EXPECT_EQ(states_.job_state(1, 0), JobState::kStopping);
  ASSERT_TRUE(states_.move_job(1, 0, JobEvent::kStopped, std::nullopt, 13, "Preempted"));
  EXPECT_EQ(column("SELECT state || ' ' || reason || ' ' || placement || ' ' || attempt FROM jobs "
                   "WHERE app_id = 1 AND job = 0"),
            "PENDING Preempted [] 3");
}

TEST_F(StateStoreTest, BulkMovesTouchOnlyJobsInTheirSourceState) {
  EXPECT_EQ(states_.move_jobs_of_app(1, JobState::kPending, JobEvent::kDropped, "EarlyStopped", 5), 2);
  EXPECT_EQ(column("SELECT group_concat(state || ':' || reason, ' ') FROM (SELECT * FROM jobs ORDER BY job)"),
            "COMPLETED:EarlyStopped COMPLETED:EarlyStopped COMPLETED:New");  // job 2 had already completed
  EXPECT_EQ(states_.move_jobs_of_app(1, JobState::kRunning, JobEvent::kCancelled, "x", 6), 0);  // not a move
}

TEST_F(StateStoreTest, AnEndedAppNeverMovesAgain) {
  EXPECT_TRUE(states_.move_app(1, AppState::kRunning, 1));
  EXPECT_FALSE(states_.move_app(1, AppState::kRunning, 2));  // already there
  EXPECT_TRUE(states_.move_app(1, AppState::kCancelled, 3));
  EXPECT_FALSE(states_.move_app(1, AppState::kCompleted, 4));
  EXPECT_EQ(column("SELECT state || ' ' || finished_at FROM apps WHERE id = 1"), "CANCELLED 3.0");
  const auto counts = states_.job_counts(1);
  EXPECT_EQ(counts.total, 3);
  EXPECT_EQ(counts.completed, 1);
  EXPECT_EQ(counts.active, 0);
}

}  // namespace
}  // namespace themis::store
