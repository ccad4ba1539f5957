#include "test_cluster.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "coordinator/store/database.h"

namespace themis::testing {

namespace {
const std::string kBin = THEMIS_BIN_DIR;

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}
}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TestCluster::TestCluster(std::vector<NodeSpec> nodes, const std::string& lease_duration,
                         const std::string& coordinator_settings)
    : nodes_(std::move(nodes)) {
  endpoint_ = "tcp://127.0.0.1:" + std::to_string(free_port());
  // Tests run in parallel: each cluster's gangs rendezvous in their own 64 ports, below the ephemeral range.
  const int rendezvous_base = 20000 + static_cast<int>(getpid() % 150) * 64;
  const std::string keys = dir_.file("keys");
  std::vector<std::pair<std::string, std::string>> principals = {{"coordinator", ""}, {"alice", "user"}, {"bob", "user"}, {"root", "admin"}, {"mallory", ""}};
  for (const auto& n : nodes_) principals.emplace_back(n.host, "node");
  std::ostringstream config;
  config << "[cluster]\ncoordinator = \"" << endpoint_ << "\"\ncoordinator_key = \"" << keys << "/coordinator.key\"\n\n"
         << "[coordinator]\nlisten = \"" << endpoint_ << "\"\ndatabase = \"" << db_path() << "\"\n"
         << "authorized_keys = \"" << dir_.file("authorized_keys") << "\"\nsecret_key = \"" << keys
         << "/coordinator.key_secret\"\nheartbeat_interval = \"" << kHeartbeatMs << "ms\"\n"
         << "lease_duration = \"" << lease_duration << "\"\nround_batch_window = \"50ms\"\npolicy = \"" << THEMIS_TEST_POLICY << "\"\n"
         << "rendezvous_ports = [" << rendezvous_base << ", " << rendezvous_base + 63 << "]\n";
  // Defaults the settings may replace, written before them: the settings may open tables of their own.
  // The first-iteration probe changes how a new app starts; only the tests about it turn it on.
  if (coordinator_settings.find("probe_duration") == std::string::npos) config << "probe_duration = \"0s\"\n";
  if (coordinator_settings.find("heartbeat_lives") == std::string::npos) config << "heartbeat_lives = " << kHeartbeatLives << "\n";
  config << coordinator_settings;
  // Jobs run as their owner's Unix account when the nodelet is root (CI); these test principals have none,
  // so their jobs run as root as they would without switching (the nodelets allow it, below). The tests of
  // job accounts write a [users] table of their own.
  if (coordinator_settings.find("[users]") == std::string::npos) {
    config << "\n[users]\nalice = \"root\"\nbob = \"root\"\nroot = \"root\"\n";
  }
  write_file("themis.toml", config.str());
  for (const auto& [name, role] : principals) {
    auto r = run_command({kBin + "/themisctl", "keygen", name, "--dir", keys});
    if (r.code != 0) throw std::runtime_error("keygen failed: " + r.out);
    if (role.empty()) continue;  // the coordinator's own key, and mallory who is never enrolled
    r = run_command({kBin + "/themis-coordinator", "-c", dir_.file("themis.toml"), "enroll", name,
                     keys + "/" + name + ".key", "--role", role});
    if (r.code != 0) throw std::runtime_error("enroll failed: " + r.out);
  }
  for (const auto& n : nodes_) set_node_settings(n.host, "");
}

void TestCluster::set_node_settings(const std::string& host, const std::string& settings) {
  const auto n = std::find_if(nodes_.begin(), nodes_.end(), [&](const NodeSpec& spec) { return spec.host == host; });
  if (n == nodes_.end()) throw std::invalid_argument("no node " + host + " in this cluster");
  const std::string keys = dir_.file("keys");
  std::ostringstream node;
  node << "[cluster]\ncoordinator = \"" << endpoint_ << "\"\ncoordinator_key = \"" << keys << "/coordinator.key\"\n\n"
       << "[nodelet]\nhost = \"" << n->host << "\"\nrack = \"" << n->rack << "\"\naddress = \"127.0.0.1\"\n"
       << "secret_key = \"" << keys << "/" << n->host << ".key_secret\"\nwork_dir = \"" << dir_.file(n->host) << "\"\n"
       << "grace_period = \"2s\"\nslots = [";
  for (std::size_t s = 0; s < n->slots.size(); ++s) {
    node << (s ? ", " : "") << "[";
    for (std::size_t g = 0; g < n->slots[s].size(); ++g) node << (g ? ", " : "") << n->slots[s][g];
    node << "]";
  }
  node << "]\n";
  if (settings.find("allow_root_jobs") == std::string::npos) node << "allow_root_jobs = true\n";  // see [users] above
  node << settings;
  write_file(n->host + ".toml", node.str());
}

TestCluster::~TestCluster() {
  for (auto& [host, p] : nodelets_) p.kill_and_wait(SIGTERM);
  coordinator_.kill_and_wait(SIGTERM);
}

std::string TestCluster::write_file(const std::string& name, const std::string& text) {
  std::ofstream out(dir_.file(name));
  out << text;
  return dir_.file(name);
}

std::string TestCluster::submit(const std::string& user, const std::string& name, const std::string& spec) {
  const Output r = ctl(user, {"submit", "--parsable", write_file(name + ".toml", spec)});
  if (r.code != 0) throw std::runtime_error("themisctl submit " + name + " exited " + std::to_string(r.code) + ": " + r.out);
  return r.first_stdout_line();
}

std::string one_gpu_sleeper(const std::string& name, int seconds) {
  return "name = \"" + name + "\"\ncommand = [\"sleep\", \"" + std::to_string(seconds) +
         "\"]\n[hyperparameters]\nx = [0]\n[resources]\ngpus_per_job = 1\n[checkpoint]\ngrace_period = \"1s\"\n";
}

std::string TestCluster::key(const std::string& name, bool secret) const {
  return dir_.file("keys/" + name + (secret ? ".key_secret" : ".key"));
}

void TestCluster::start_coordinator(const std::map<std::string, std::string>& env) {
  coordinator_ = Process({kBin + "/themis-coordinator", "-c", dir_.file("themis.toml")}, coordinator_log(), env);
  // Ready once the database exists and the port answers a query.
  wait_for([&] { return !coordinator_.running() || ctl("root", {"whoami"}).code == 0; }, std::chrono::seconds(10));
  if (!coordinator_.running()) throw std::runtime_error("coordinator exited at start: " + read_text(coordinator_log()));
}

void TestCluster::kill_coordinator(int sig) { coordinator_.kill_and_wait(sig); }

void TestCluster::signal_coordinator(int sig) { coordinator_.signal(sig); }

bool TestCluster::start() {
  start_coordinator();
  std::size_t gpus = 0;
  for (const NodeSpec& node : nodes_) {
    start_node(node.host);
    for (const auto& slot : node.slots) gpus += slot.size();
  }
  return wait_for([&] { return sql("SELECT count(*) FROM gpus") == std::to_string(gpus); }, std::chrono::seconds(20));
}

void TestCluster::start_node(const std::string& host, const std::map<std::string, std::string>& env) {
  nodelets_[host] = Process({kBin + "/themis-nodelet", "-c", dir_.file(host + ".toml")}, dir_.file(host + ".log"), env);
}

void TestCluster::kill_node(const std::string& host, int sig) { nodelets_.at(host).kill_and_wait(sig); }

pid_t TestCluster::node_pid(const std::string& host) { return nodelets_.at(host).pid(); }

Output TestCluster::ctl(const std::string& user, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kBin + "/themisctl", "--coordinator", endpoint_, "--key", key(user, true),
                                   "--server-key", key("coordinator", false), "--timeout-ms", "2000"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

std::string TestCluster::sql(const std::string& query) {
  store::Database db(db_path(), /*read_only=*/true);
  auto st = db.prepare(query);
  if (!st.step() || st.is_null(0)) return "";
  return st.text(0);
}

bool TestCluster::wait_for(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (condition()) return true;
    } catch (const std::exception&) {
      // the database may not exist yet
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace themis::testing
