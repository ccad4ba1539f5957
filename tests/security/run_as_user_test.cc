// Jobs run as the Unix account of the user who submitted them (docs/admin.md, "Job accounts"): real
// accounts made with useradd, a real coordinator and nodelet (running as root, as in production), and a
// job that reports who it is. Needs root; skipped otherwise.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <regex>
#include <sstream>

#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

// A Unix account for the length of one test.
class UnixAccount {
 public:
  explicit UnixAccount(const std::string& name) : name_(name) {
    const auto r = run_command({"/usr/sbin/useradd", "--no-create-home", "--user-group", "--shell", "/bin/sh", name});
    if (r.code != 0) throw std::runtime_error("useradd " + name + ": " + r.out);
    const passwd* entry = ::getpwnam(name.c_str());
    if (!entry) throw std::runtime_error("useradd made no passwd entry for " + name);
    uid_ = entry->pw_uid;
    gid_ = entry->pw_gid;
  }
  ~UnixAccount() { run_command({"/usr/sbin/userdel", name_}); }
  UnixAccount(const UnixAccount&) = delete;
  UnixAccount& operator=(const UnixAccount&) = delete;
  const std::string& name() const { return name_; }
  uid_t uid() const { return uid_; }
  gid_t gid() const { return gid_; }

  // Runs `check` in a child process with this account's credentials; its return value is the exit status.
  int run_as(const std::function<int()>& check) const {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(gid_) != 0 || ::setuid(uid_) != 0) ::_exit(100);
      ::_exit(check());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
  }

 private:
  std::string name_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

std::string account_name(char which) { return "thm" + std::to_string(::getpid() % 1000000) + which; }

std::string whoami_spec(const std::string& checkpoint_root) {
  return "name = \"whoami\"\nworkdir = \"/\"\n"
         "command = [\"sh\", \"-c\", \"echo uid=$(id -u) gid=$(id -g) user=$USER logname=$LOGNAME home=$HOME; env; "
         "echo weights > $THEMIS_CHECKPOINT_DIR/state; exec sleep 60\"]\n"
         "[hyperparameters]\nx = [0]\n"
         "[checkpoint]\ndir = \"" + checkpoint_root + "/{app}/{job}\"\ngrace_period = \"1s\"\n";
}

// "Uid:" or "Gid:" of /proc/<pid>/status: real, effective, saved, filesystem.
std::string status_line(pid_t pid, const std::string& field) {
  std::istringstream in(read_text("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return line;
  }
  return "";
}

bool can_open(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

class JobAccounts : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "needs root: it creates Unix accounts with useradd and runs a nodelet that switches users";
    }
  }
  // One node, its nodelet running as this (root) test process; `users` the coordinator's [users] lines.
  void start(const std::string& users, const std::string& node_settings = "allow_root_jobs = false\n") {
    cluster_ = std::make_unique<TestCluster>(std::vector<NodeSpec>{{"n1", "rack-1", {{0}}}}, "60s", "\n[users]\n" + users);
    // The jobs' own accounts must reach the checkpoint root through the test's directory.
    ::chmod(cluster_->dir().c_str(), 0711);
    checkpoints_ = cluster_->dir() + "/checkpoints";
    ::mkdir(checkpoints_.c_str(), 01777);
    ::chmod(checkpoints_.c_str(), 01777);
    cluster_->set_node_settings("n1", node_settings);
    cluster_->start_coordinator();
    cluster_->start_node("n1", {{"NODELET_ONLY_SECRET", "must-not-reach-jobs"}});
    ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "1"; }, 10s))
        << read_text(cluster_->coordinator_log());
  }
  void submit_as_alice() {
    const auto r = cluster_->ctl("alice", {"submit", "--parsable", cluster_->write_file("whoami.toml", whoami_spec(checkpoints_))});
    ASSERT_EQ(r.code, 0) << r.out;
    ASSERT_EQ(r.first_stdout_line(), "1");
  }
  std::string nodelet_log() const { return read_text(cluster_->dir() + "/n1.log"); }

  std::unique_ptr<TestCluster> cluster_;
  std::string checkpoints_;
};

TEST_F(JobAccounts, WorkerRunsAsItsOwnersAccountWithPrivateCheckpointAndLogDirectories) {
  const UnixAccount a(account_name('a')), b(account_name('b'));
  start("alice = \"" + a.name() + "\"\nbob = \"" + b.name() + "\"\n");
  submit_as_alice();
  const std::string rank_log = cluster_->dir() + "/n1/jobs/1/0/attempt-1/rank-0.log";
  const std::string checkpoint = checkpoints_ + "/1/0";
  ASSERT_TRUE(cluster_->wait_for([&] { return read_text(rank_log).find("weights") != std::string::npos ||
                                              can_open(checkpoint + "/state", O_RDONLY); }, 20s))
      << nodelet_log() << read_text(cluster_->coordinator_log());
  // The running rank's credentials, from the kernel.
  std::smatch started;
  const std::string log = nodelet_log();
  ASSERT_TRUE(std::regex_search(log, started, std::regex("started 1_0 attempt 1 rank 0/1 pid ([0-9]+)"))) << log;
  const pid_t pid = static_cast<pid_t>(std::stol(started[1]));
  const std::string uid = std::to_string(a.uid()), gid = std::to_string(a.gid());
  EXPECT_EQ(status_line(pid, "Uid:"), "Uid:\t" + uid + "\t" + uid + "\t" + uid + "\t" + uid);
  EXPECT_EQ(status_line(pid, "Gid:"), "Gid:\t" + gid + "\t" + gid + "\t" + gid + "\t" + gid);
  // Its environment: the account's, plus what the job needs, and nothing else of the nodelet's.
  ASSERT_TRUE(cluster_->wait_for([&] { return read_text(rank_log).find("uid=") != std::string::npos; }, 5s));
  const std::string rank = read_text(rank_log);
  EXPECT_NE(rank.find("uid=" + uid + " gid=" + gid + " user=" + a.name() + " logname=" + a.name()), std::string::npos) << rank;
  EXPECT_NE(rank.find("THEMIS_RANK=0"), std::string::npos) << rank;
  EXPECT_NE(rank.find("PATH="), std::string::npos) << rank;
  EXPECT_EQ(rank.find("NODELET_ONLY_SECRET"), std::string::npos) << rank;
  // The checkpoint and log directories are the account's, mode 0700.
  struct stat st {};
  ASSERT_EQ(::stat(checkpoint.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, a.uid());
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  const std::string log_dir = cluster_->dir() + "/n1/jobs/1";
  ASSERT_EQ(::stat(log_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, a.uid());
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(rank_log.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, a.uid());
  // The owner reads its checkpoint; another user can neither read it nor list the directories.
  EXPECT_EQ(a.run_as([&] { return can_open(checkpoint + "/state", O_RDONLY) ? 0 : 1; }), 0);
  EXPECT_EQ(b.run_as([&] { return can_open(checkpoint + "/state", O_RDONLY) ? 0 : 1; }), 1);
  EXPECT_EQ(b.run_as([&] { return can_open(checkpoint, O_RDONLY | O_DIRECTORY) ? 0 : 1; }), 1);
  EXPECT_EQ(b.run_as([&] { return can_open(log_dir, O_RDONLY | O_DIRECTORY) ? 0 : 1; }), 1);
  EXPECT_EQ(b.run_as([&] { return can_open(rank_log, O_RDONLY) ? 0 : 1; }), 1);
  cluster_->kill_node("n1", SIGTERM);  // before the accounts go
}

// The failure reaches the job's record, which `themisctl explain` shows its owner.
void expect_refused(TestCluster& cluster, const std::string& why) {
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT log_tail FROM jobs WHERE app_id = 1 AND job = 0").find(why) !=
                                            std::string::npos; }, 20s))
      << read_text(cluster.dir() + "/n1.log") << read_text(cluster.coordinator_log());
  const auto explain = cluster.ctl("alice", {"explain", "1"});
  EXPECT_NE(explain.out.find(why), std::string::npos) << explain.out;
  // No process ran: the refusal came before fork, and the job's log directory was never made.
  EXPECT_FALSE(std::filesystem::exists(cluster.dir() + "/n1/jobs/1"));
  EXPECT_NE(read_text(cluster.dir() + "/n1.log").find("refused"), std::string::npos);
}

TEST_F(JobAccounts, RootIsRefusedWithoutAllowRootJobs) {
  start("alice = \"root\"\n");
  submit_as_alice();
  expect_refused(*cluster_, "is uid 0 (root); this host runs jobs as root only with nodelet.allow_root_jobs = true");
}

TEST_F(JobAccounts, UnknownAccountIsRefused) {
  start("alice = \"themis-no-such-account\"\n");
  submit_as_alice();
  expect_refused(*cluster_, "Unix account 'themis-no-such-account' does not exist on this host");
}

}  // namespace
}  // namespace themis::testing
