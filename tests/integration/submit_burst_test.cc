// Concurrent submissions from several CURVE clients at once (a small version of bench/load_bench):
// every submission is answered, and the apps table holds exactly one app per acknowledged submission,
// with the id, name and owner the answer gave.
#include <gtest/gtest.h>

#include <latch>
#include <map>
#include <set>
#include <thread>

#include "coordinator/store/database.h"
#include "net/curve_keys.h"
#include "net/request_client.h"
#include "test_cluster.h"

namespace themis::testing {
namespace {

struct Acked {
  std::int64_t app = 0;
  std::string owner;
};

TEST(SubmitBurst, EveryAcknowledgedSubmissionIsStoredExactlyOnce) {
  TestCluster cluster({{"node-a", "rack-1", {{0, 1}}}});
  cluster.start_coordinator();
  const std::vector<std::string> users = {"alice", "bob", "root"};
  constexpr int kPerClient = 150;
  std::vector<std::map<std::string, Acked>> acked(users.size());
  std::vector<std::vector<std::string>> failures(users.size());
  std::latch go(static_cast<std::ptrdiff_t>(users.size()));
  std::vector<std::thread> clients;
  for (std::size_t c = 0; c < users.size(); ++c) {
    clients.emplace_back([&, c] {
      net::ClientOptions options;
      options.endpoint = cluster.endpoint();
      options.own_keys = net::read_certificate(cluster.key(users[c], true));
      options.server_public_key = net::read_certificate(cluster.key("coordinator", false)).public_key;
      options.timeout = std::chrono::seconds(30);
      net::RequestClient rpc(options);
      go.arrive_and_wait();
      for (int n = 0; n < kPerClient; ++n) {
        const std::string name = "burst-" + users[c] + "-" + std::to_string(n);
        net::OutMessage out(rpc.next_request_id());
        auto submit = out.body().initSubmit();
        submit.setSpec("name = \"" + name + "\"\ncommand = [\"true\"]\n");
        submit.setSpecName(name + ".toml");
        const auto reply = rpc.call(out);
        if (!reply) failures[c].push_back(name + ": no answer");
        else if (reply->which() != wire::Envelope::Body::Which::SUBMITTED) failures[c].push_back(name + ": refused");
        else acked[c][name] = {reply->envelope().getBody().getSubmitted().getApp(), users[c]};
      }
    });
  }
  for (auto& t : clients) t.join();

  std::map<std::string, Acked> all;
  std::set<std::int64_t> ids;
  for (std::size_t c = 0; c < users.size(); ++c) {
    EXPECT_TRUE(failures[c].empty()) << users[c] << ": " << failures[c].size() << " failed, first " << failures[c].front();
    EXPECT_EQ(acked[c].size(), static_cast<std::size_t>(kPerClient)) << users[c];
    for (const auto& [name, a] : acked[c]) {
      all[name] = a;
      EXPECT_TRUE(ids.insert(a.app).second) << "app id " << a.app << " acknowledged twice";
    }
  }
  store::Database db(cluster.db_path(), /*read_only=*/true);
  auto st = db.prepare("SELECT id, name, owner FROM apps ORDER BY id");
  std::map<std::string, int> stored;
  while (st.step()) {
    const std::string name = st.text(1);
    ++stored[name];
    const auto it = all.find(name);
    ASSERT_NE(it, all.end()) << "app " << st.int64(0) << " (" << name << ") was never acknowledged";
    EXPECT_EQ(st.int64(0), it->second.app) << name;
    EXPECT_EQ(st.text(2), it->second.owner) << name;
  }
  EXPECT_EQ(stored.size(), all.size()) << "acknowledged submissions missing from the apps table";
  for (const auto& [name, copies] : stored) EXPECT_EQ(copies, 1) << name << " stored " << copies << " times";
}

}  // namespace
}  // namespace themis::testing
