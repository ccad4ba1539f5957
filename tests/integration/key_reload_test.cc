// SIGHUP makes a running coordinator re-read authorized_keys: a newly enrolled key gets in, a removed
// key is refused on its next connection, and a broken file leaves the keys in use unchanged.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <sstream>

#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

class KeyReload : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<TestCluster>(std::vector<NodeSpec>{{"node-a", "rack-1", {{0}}}});
    cluster_->start_coordinator();
  }
  std::string keys_file() const { return cluster_->dir() + "/authorized_keys"; }
  int whoami(const std::string& user, std::string* out = nullptr) {
    const auto r = cluster_->ctl(user, {"whoami"});
    if (out) *out = r.out;
    return r.code;
  }
  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(KeyReload, SighupEnrollsNewKeysAndRevokesRemovedOnes) {
  EXPECT_EQ(whoami("mallory"), 77);  // generated but never enrolled: "key not enrolled"
  const auto enroll = run_command({std::string(THEMIS_BIN_DIR) + "/themis-coordinator", "-c", cluster_->dir() + "/themis.toml",
                                   "enroll", "mallory", cluster_->key("mallory", false), "--role", "user"});
  ASSERT_EQ(enroll.code, 0) << enroll.out;
  // The file changed, but the running coordinator has not read it yet.
  EXPECT_EQ(whoami("mallory"), 77);
  cluster_->signal_coordinator(SIGHUP);
  std::string out;
  ASSERT_TRUE(cluster_->wait_for([&] { return whoami("mallory", &out) == 0; }, 20s))
      << read_text(keys_file()) << read_text(cluster_->key("mallory", false)) << read_text(cluster_->coordinator_log());
  EXPECT_EQ(out, "user:mallory\n");
  EXPECT_NE(cluster_->sql("SELECT count(*) FROM events WHERE kind = 'KeysReloaded'"), "0");

  // Remove bob's line: his next connection is refused; alice is unaffected.
  std::stringstream kept;
  {
    std::ifstream in(keys_file());
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("bob ", 0) != 0) kept << line << "\n";
    }
  }
  std::ofstream(keys_file()) << kept.str();
  ASSERT_EQ(whoami("bob"), 0);  // still the old list
  cluster_->signal_coordinator(SIGHUP);
  ASSERT_TRUE(cluster_->wait_for([&] { return whoami("bob") == 77; }, 20s)) << read_text(cluster_->coordinator_log());
  EXPECT_EQ(whoami("alice"), 0);

  // A broken file is reported and changes nothing: mallory stays in, bob stays out.
  std::ofstream(keys_file(), std::ios::app) << "carol not-a-key user\n";
  const auto reloads = cluster_->sql("SELECT count(*) FROM events WHERE kind = 'KeysReloaded'");
  cluster_->signal_coordinator(SIGHUP);
  ASSERT_TRUE(cluster_->wait_for([&] { return read_text(cluster_->coordinator_log()).find("the keys in use are kept") != std::string::npos; },
                                 20s))
      << read_text(cluster_->coordinator_log());
  EXPECT_NE(read_text(cluster_->coordinator_log()).find("public key of 'carol' is not 40 characters of Z85"), std::string::npos);
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM events WHERE kind = 'KeysReloaded'"), reloads);
  EXPECT_EQ(whoami("mallory"), 0);
  EXPECT_EQ(whoami("bob"), 77);
}

}  // namespace
}  // namespace themis::testing
