// The hosts and gpus rows (coordinator/store/host_store.h) on a real SQLite file made by the migrations.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/store/database.h"
#include "coordinator/store/host_store.h"
#include "tests/store/temp_dir.h"

namespace themis::store {
namespace {

class HostStoreTest : public ::testing::Test {
 protected:
  std::string column(const std::string& sql) {
    auto st = db_.prepare(sql);
    EXPECT_TRUE(st.step()) << sql;
    return st.text(0);
  }
  static std::vector<HostStore::DeclaredSlot> slots(int count, int gpus_each) {
    std::vector<HostStore::DeclaredSlot> out(static_cast<std::size_t>(count));
    std::int64_t local_index = 0;  // CUDA device numbers are the host's, across its slots
    for (auto& slot : out) {
      for (int i = 0; i < gpus_each; ++i) slot.push_back({local_index++, "H100"});
    }
    return out;
  }
  testing::TempDir dir_;
  Database db_{dir_.file("t.db")};
  HostStore hosts_{db_};
};

TEST_F(HostStoreTest, NewHostsTakeTheNextGpuAndSlotNumbers) {
  EXPECT_FALSE(hosts_.find("a"));
  EXPECT_EQ(hosts_.add("a", "r1", slots(2, 2), 4, 10), 0);
  EXPECT_EQ(hosts_.add("b", "r2", slots(1, 3), 3, 11), 4);
  EXPECT_EQ(column("SELECT group_concat(gpu || ':' || local_index || ':' || slot, ' ') FROM "
                   "(SELECT * FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE h.name = 'b' ORDER BY gpu)"),
            "4:0:2 5:1:2 6:2:2");
  EXPECT_EQ(column("SELECT state || ' ' || rack || ' ' || registered_at FROM hosts WHERE name = 'a'"), "up r1 10.0");
}

TEST_F(HostStoreTest, ARegisteringHostKeepsItsGpuIds) {
  hosts_.add("a", "r1", slots(1, 2), 2, 10);
  hosts_.add("b", "r1", slots(1, 2), 2, 10);
  hosts_.mark_down("a");
  const auto again = hosts_.find("a");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->first_gpu, 0);
  EXPECT_EQ(again->gpu_count, 2);
  hosts_.mark_up(again->id, "r9", 20);
  EXPECT_EQ(column("SELECT state || ' ' || rack || ' ' || first_gpu || ' ' || last_heartbeat FROM hosts WHERE name = 'a'"),
            "up r9 0 20.0");
  EXPECT_EQ(column("SELECT group_concat(gpu, ',') FROM (SELECT gpu FROM gpus WHERE host_id = " +
                   std::to_string(again->id) + " ORDER BY gpu)"),
            "0,1");
  EXPECT_EQ(column("SELECT count(*) FROM gpus"), "4");  // nothing was added by coming back
}

TEST_F(HostStoreTest, AHostMarkedDownIsNoLongerUp) {
  hosts_.add("a", "r1", slots(1, 1), 1, 10);
  hosts_.add("b", "r1", slots(1, 1), 1, 10);
  EXPECT_EQ(hosts_.up_hosts(), (std::vector<std::string>{"a", "b"}));
  hosts_.mark_down("a");
  EXPECT_EQ(hosts_.up_hosts(), (std::vector<std::string>{"b"}));
  EXPECT_EQ(column("SELECT state FROM hosts WHERE name = 'a'"), "down");
}

TEST_F(HostStoreTest, AJobsPlacementNamesItsHostsAndWhetherTheyAreUp) {
  hosts_.add("a", "r1", slots(1, 2), 2, 10);  // GPUs 0, 1
  hosts_.add("b", "r1", slots(1, 2), 2, 10);  // GPUs 2, 3
  db_.exec("INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, submitted_at) "
           "VALUES (1, 'x', 'alice', 'RUNNING', '', 3, 1, 0)");
  db_.exec("INSERT INTO jobs(app_id, job, state, command, placement, state_since) VALUES (1, 0, 'RUNNING', '[]', '[1,2,3]', 0)");
  hosts_.mark_down("b");
  auto spans = hosts_.hosts_of_job(1, 0);
  std::sort(spans.begin(), spans.end());
  EXPECT_EQ(spans, (std::vector<std::pair<std::string, bool>>{{"a", true}, {"b", false}}));
  EXPECT_EQ(hosts_.up_hosts_of_job(1, 0), (std::vector<std::string>{"a"}));
  EXPECT_EQ(hosts_.live_jobs_on("b"), (std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 0}}));
  EXPECT_TRUE(hosts_.stopping_jobs_on("a", 100).empty());  // running, not stopping
}

}  // namespace
}  // namespace themis::store
