#include "invariants.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <toml++/toml.h>

#include "coordinator/store/database.h"

namespace themis::faults {

namespace {

using JobId = std::pair<std::int64_t, std::int64_t>;  // app, job

std::string job_name(std::int64_t app, std::int64_t job) { return std::to_string(app) + "_" + std::to_string(job); }

std::vector<std::int64_t> parse_placement(const std::string& text) {
  try {
    return nlohmann::json::parse(text).get<std::vector<std::int64_t>>();
  } catch (const std::exception&) {
    return {};
  }
}

// An app run by a launcher (its spec has a [scheduler] table, coordinator/launchers.cc) owns its leases:
// a lease names the job that runs on the GPU, or the app's first job until the launcher places one.
bool runs_a_launcher(const std::string& spec) {
  try {
    return toml::parse(spec)["scheduler"].is_table();
  } catch (const toml::parse_error&) {
    return false;
  }
}

bool is_ended(const std::string& app_state) {
  return app_state == "COMPLETED" || app_state == "FAILED" || app_state == "CANCELLED";
}

// What rule 4 needs from one snapshot of the database.
struct Snapshot {
  struct Job {
    std::string state;
    std::int64_t attempt = 0;
    std::set<std::int64_t> placement;
  };
  std::map<JobId, Job> jobs;
  std::map<std::pair<std::string, int>, std::int64_t> gpu_of;  // (host, local index) -> GpuIndex
  std::map<std::int64_t, JobId> active_lease;                  // GpuIndex -> holder
  std::set<std::int64_t> launcher_apps;
};

Snapshot read_snapshot(store::Database& db) {
  Snapshot s;
  auto apps = db.prepare("SELECT id, spec FROM apps");
  while (apps.step()) {
    if (runs_a_launcher(apps.text(1))) s.launcher_apps.insert(apps.int64(0));
  }
  auto jobs = db.prepare("SELECT app_id, job, state, attempt, placement FROM jobs");
  while (jobs.step()) {
    const auto placement = parse_placement(jobs.text(4));
    s.jobs[{jobs.int64(0), jobs.int64(1)}] = {jobs.text(2), jobs.int64(3), {placement.begin(), placement.end()}};
  }
  auto gpus = db.prepare("SELECT h.name, g.local_index, g.gpu FROM gpus g JOIN hosts h ON h.id = g.host_id");
  while (gpus.step()) s.gpu_of[{gpus.text(0), static_cast<int>(gpus.int64(1))}] = gpus.int64(2);
  auto leases = db.prepare("SELECT gpu, app_id, job FROM leases WHERE state = 'active'");
  while (leases.step()) s.active_lease[leases.int64(0)] = {leases.int64(1), leases.int64(2)};
  return s;
}

// A read transaction: every query sees the same committed state.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(store::Database& db) : db_(db) { db_.exec("BEGIN"); }
  ~ReadSnapshot() {
    try {
      db_.exec("COMMIT");
    } catch (const std::exception&) {
      // a read transaction has nothing to lose
    }
  }
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

 private:
  store::Database& db_;
};

std::string read_link(const std::string& path) {
  std::error_code error;
  auto target = std::filesystem::read_symlink(path, error);
  if (error) return {};
  std::string text = target.string();
  const std::string deleted = " (deleted)";
  if (text.size() > deleted.size() && text.compare(text.size() - deleted.size(), deleted.size(), deleted) == 0) {
    text.resize(text.size() - deleted.size());
  }
  return text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool is_zombie(int pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z' || stat[paren + 2] == 'X';
}

std::vector<int> visible_devices(int pid) {
  const std::string environ = read_file("/proc/" + std::to_string(pid) + "/environ");
  const std::string key = "CUDA_VISIBLE_DEVICES=";
  std::vector<int> devices;
  std::size_t start = 0;
  while (start < environ.size()) {
    const auto end = std::min(environ.find('\0', start), environ.size());
    if (environ.compare(start, key.size(), key) == 0) {
      std::stringstream list(environ.substr(start + key.size(), end - start - key.size()));
      std::string item;
      while (std::getline(list, item, ',')) {
        try {
          devices.push_back(std::stoi(item));
        } catch (const std::exception&) {
          devices.push_back(-1);
        }
      }
    }
    start = end + 1;
  }
  return devices;
}

// <host>/jobs/<app>/<job>/attempt-<n>/rank-<r>.log, relative to the cluster directory.
bool parse_rank_log(const std::string& relative, WorkerProcess& w) {
  std::vector<std::string> parts;
  std::stringstream s(relative);
  std::string part;
  while (std::getline(s, part, '/')) parts.push_back(part);
  if (parts.size() != 6 || parts[1] != "jobs" || parts[4].rfind("attempt-", 0) != 0 || parts[5].rfind("rank-", 0) != 0) {
    return false;
  }
  try {
    w.host = parts[0];
    w.app = std::stoll(parts[2]);
    w.job = std::stoll(parts[3]);
    w.attempt = std::stoll(parts[4].substr(8));
    w.rank = std::stoll(parts[5].substr(5));
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

std::string describe(const WorkerProcess& w) {
  return "pid " + std::to_string(w.pid) + " (" + job_name(w.app, w.job) + " attempt " + std::to_string(w.attempt) +
         " rank " + std::to_string(w.rank) + " on " + w.host + ")";
}

std::vector<std::string> check_workers(const std::vector<WorkerProcess>& workers, const Snapshot& s) {
  std::vector<std::string> violations;
  std::map<std::int64_t, std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>>> attempts_on_gpu;
  std::map<std::int64_t, std::string> first_on_gpu;
  for (const auto& w : workers) {
    std::vector<std::int64_t> gpus;
    for (const int d : w.devices) {
      const auto it = s.gpu_of.find({w.host, d});
      if (it == s.gpu_of.end()) {
        violations.push_back("worker " + describe(w) + " runs on device " + std::to_string(d) + " of " + w.host +
                             ", which is no registered GPU");
        continue;
      }
      gpus.push_back(it->second);
      attempts_on_gpu[it->second].insert({w.app, w.job, w.attempt});
      first_on_gpu.emplace(it->second, describe(w));
    }
    if (w.devices.empty()) violations.push_back("worker " + describe(w) + " has no CUDA_VISIBLE_DEVICES");
    const auto job = s.jobs.find({w.app, w.job});
    if (job == s.jobs.end()) {
      violations.push_back("worker " + describe(w) + " runs but its job is not in the database");
      continue;
    }
    const auto& [state, attempt, placement] = job->second;
    if (attempt != w.attempt) {
      violations.push_back("worker " + describe(w) + " of a fenced attempt still runs: the job is " + state +
                           " on attempt " + std::to_string(attempt));
      continue;
    }
    if (state == "STOPPING") continue;  // being stopped: its grace period runs
    if (state != "STARTING" && state != "RUNNING") {
      violations.push_back("worker " + describe(w) + " still runs but its job is " + state);
      continue;
    }
    for (const auto gpu : gpus) {
      const auto lease = s.active_lease.find(gpu);
      const bool held = lease != s.active_lease.end() && lease->second.first == w.app &&
                        (s.launcher_apps.count(w.app) > 0 || lease->second.second == w.job);
      if (!held) {
        violations.push_back("worker " + describe(w) + " runs on GPU " + std::to_string(gpu) + " without an active lease (" +
                             (lease == s.active_lease.end() ? std::string("none")
                                                            : "held by " + job_name(lease->second.first, lease->second.second)) +
                             ")");
      }
      if (!placement.count(gpu)) {
        violations.push_back("worker " + describe(w) + " runs on GPU " + std::to_string(gpu) +
                             ", outside its job's placement");
      }
    }
  }
  for (const auto& [gpu, attempts] : attempts_on_gpu) {
    if (attempts.size() < 2) continue;
    std::string list;
    for (const auto& [app, job, attempt] : attempts) {
      list += (list.empty() ? "" : ", ") + job_name(app, job) + " attempt " + std::to_string(attempt);
    }
    violations.push_back("GPU " + std::to_string(gpu) + " has live workers of " + std::to_string(attempts.size()) +
                         " attempts at once: " + list);
  }
  return violations;
}

}  // namespace

void copy_database(const std::string& db_path, const std::string& copy_path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    const std::string error = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw std::runtime_error(db_path + ": cannot open: " + error);
  }
  sqlite3_busy_timeout(db, 5000);
  char* error = nullptr;
  const std::string sql = "VACUUM INTO '" + copy_path + "'";
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error(db_path + ": VACUUM INTO " + copy_path + ": " + message);
}

std::vector<WorkerProcess> find_workers(const std::string& cluster_dir) {
  std::vector<WorkerProcess> workers;
  std::error_code error;
  const std::string root = std::filesystem::weakly_canonical(cluster_dir, error).string() + "/";
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    const int pid = std::stoi(name);
    WorkerProcess w;
    w.pid = pid;
    bool found = false;
    for (const char* fd : {"/fd/1", "/fd/2"}) {
      const std::string target = read_link("/proc/" + name + fd);
      if (target.rfind(root, 0) == 0 && parse_rank_log(target.substr(root.size()), w)) {
        found = true;
        break;
      }
    }
    if (!found || is_zombie(pid)) continue;
    w.devices = visible_devices(pid);
    if (is_zombie(pid)) continue;  // exited while we read it
    workers.push_back(std::move(w));
  }
  return workers;
}

std::vector<std::string> check_database(const InvariantInput& input) {
  std::vector<std::string> v;
  store::Database db(input.db_path, /*read_only=*/true);
  ReadSnapshot snapshot(db);

  // 5a. SQLite's own checks.
  {
    auto st = db.prepare("PRAGMA integrity_check");
    std::vector<std::string> rows;
    while (st.step()) rows.push_back(st.text(0));
    if (rows != std::vector<std::string>{"ok"}) {
      std::string all;
      for (const auto& r : rows) all += (all.empty() ? "" : "; ") + r;
      v.push_back("PRAGMA integrity_check: " + all);
    }
    auto fk = db.prepare("PRAGMA foreign_key_check");
    while (fk.step()) {
      v.push_back("PRAGMA foreign_key_check: " + fk.text(0) + " row " + fk.text(1) + " refers to a missing " + fk.text(2) +
                  " row");
    }
  }

  // 1. No app lost, none duplicated.
  std::map<std::int64_t, std::string> app_state;
  std::set<std::int64_t> launcher_apps;
  {
    auto st = db.prepare("SELECT id, state, spec FROM apps");
    while (st.step()) {
      app_state[st.int64(0)] = st.text(1);
      if (runs_a_launcher(st.text(2))) launcher_apps.insert(st.int64(0));
    }
    std::set<std::int64_t> submitted;
    for (const auto id : input.submitted_apps) {
      if (!submitted.insert(id).second) v.push_back("app " + std::to_string(id) + " was submitted twice with the same id");
      if (!app_state.count(id)) v.push_back("app " + std::to_string(id) + " was submitted but is not in the database (lost)");
    }
    if (input.only_submitted_apps) {
      for (const auto& [id, state] : app_state) {
        if (!submitted.count(id)) {
          v.push_back("app " + std::to_string(id) + " (" + state + ") is in the database but was never submitted (a duplicate?)");
        }
      }
    }
    auto empty = db.prepare("SELECT a.id FROM apps a WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.app_id = a.id)");
    while (empty.step()) v.push_back("app " + empty.text(0) + " has no jobs");
  }

  // 2. No GPU leased twice.
  {
    auto st = db.prepare("SELECT gpu, count(*), group_concat(id || ' (' || app_id || '_' || job || ')', ', ') "
                         "FROM leases WHERE state = 'active' GROUP BY gpu HAVING count(*) > 1");
    while (st.step()) {
      v.push_back("GPU " + st.text(0) + " is leased " + st.text(1) + " times at once: leases " + st.text(2));
    }
  }

  // 3. Leases and jobs agree.
  std::map<JobId, std::pair<std::string, std::vector<std::int64_t>>> jobs;  // state, placement
  {
    auto st = db.prepare("SELECT app_id, job, state, placement, attempt FROM jobs");
    while (st.step()) {
      const JobId id{st.int64(0), st.int64(1)};
      const std::string state = st.text(2);
      jobs[id] = {state, parse_placement(st.text(3))};
      const bool started = state == "STARTING" || state == "RUNNING" || state == "STOPPING";
      if (started && jobs[id].second.empty()) v.push_back("job " + job_name(id.first, id.second) + " is " + state + " with no placement");
      if (started && st.int64(4) < 1) v.push_back("job " + job_name(id.first, id.second) + " is " + state + " on attempt 0");
    }
  }
  std::map<std::int64_t, std::pair<JobId, std::int64_t>> lease_of_gpu;  // gpu -> (holder, lease id)
  {
    auto st = db.prepare("SELECT id, gpu, app_id, job FROM leases WHERE state = 'active'");
    while (st.step()) {
      const std::int64_t lease = st.int64(0), gpu = st.int64(1);
      const JobId holder{st.int64(2), st.int64(3)};
      lease_of_gpu[gpu] = {holder, lease};
      const std::string where = "active lease " + std::to_string(lease) + " on GPU " + std::to_string(gpu) + " of job " +
                                job_name(holder.first, holder.second);
      const auto app = app_state.find(holder.first);
      if (app == app_state.end() || is_ended(app->second)) {
        v.push_back(where + ": the app is " + (app == app_state.end() ? std::string("missing") : app->second));
        continue;
      }
      if (launcher_apps.count(holder.first)) continue;  // the app's lease, whatever its jobs do
      const auto job = jobs.find(holder);
      if (job == jobs.end()) {
        v.push_back(where + ": no such job");
        continue;
      }
      const auto& [state, placement] = job->second;
      // Granted in a round: STARTING in the same transaction, RUNNING once its workers report.
      // A stopped, requeued or finished job releases its leases in the transaction that moves it.
      if (state != "STARTING" && state != "RUNNING") v.push_back(where + ": the job is " + state);
      else if (std::find(placement.begin(), placement.end(), gpu) == placement.end()) v.push_back(where + ": GPU not in the job's placement");
    }
    auto stale = db.prepare("SELECT id FROM leases WHERE state <> 'active' AND released_at IS NULL");
    while (stale.step()) v.push_back("lease " + stale.text(0) + " ended without released_at");
  }
  std::map<std::int64_t, std::vector<JobId>> running_on_gpu;
  for (const auto& [id, job] : jobs) {
    const auto& [state, placement] = job;
    if (state == "RUNNING") {
      for (const auto gpu : placement) running_on_gpu[gpu].push_back(id);
    }
    if (launcher_apps.count(id.first) || (state != "STARTING" && state != "RUNNING")) continue;
    for (const auto gpu : placement) {
      const auto lease = lease_of_gpu.find(gpu);
      if (lease == lease_of_gpu.end() || lease->second.first != id) {
        v.push_back("job " + job_name(id.first, id.second) + " is " + state + " on GPU " + std::to_string(gpu) +
                    " without an active lease on it");
      }
    }
  }
  for (const auto& [gpu, holders] : running_on_gpu) {
    if (holders.size() < 2) continue;
    std::string list;
    for (const auto& [app, job] : holders) list += (list.empty() ? "" : ", ") + job_name(app, job);
    v.push_back("GPU " + std::to_string(gpu) + " is in the placement of " + std::to_string(holders.size()) +
                " RUNNING jobs: " + list);
  }

  // 5b. Apps and their jobs agree (coordinator.cc finish_app_if_done, launchers.cc end_launcher_app).
  for (const auto& [app, state] : app_state) {
    std::map<std::string, int> count;
    int total = 0;
    for (const auto& [id, job] : jobs) {
      if (id.first != app) continue;
      ++count[job.first];
      ++total;
    }
    const int ended = count["COMPLETED"] + count["FAILED"] + count["CANCELLED"];
    const bool launcher = launcher_apps.count(app) > 0;
    const std::string what = "app " + std::to_string(app) + " is " + state;
    auto finished_at = db.prepare("SELECT finished_at IS NOT NULL FROM apps WHERE id = ?");
    finished_at.bind(1, app);
    finished_at.step();
    const bool has_finished_at = finished_at.int64(0) != 0;
    if (is_ended(state)) {
      if (!has_finished_at) v.push_back(what + " without finished_at");
      const int unfinished = count["PENDING"] + count["STARTING"] + count["RUNNING"];
      if (unfinished > 0) v.push_back(what + " but " + std::to_string(unfinished) + " of its jobs are PENDING, STARTING or RUNNING");
      if (launcher) continue;  // a launcher's app ends when its launcher says; its jobs may still be STOPPING
      if (count["STOPPING"] > 0) v.push_back(what + " but " + std::to_string(count["STOPPING"]) + " of its jobs are STOPPING");
      const bool state_follows = state == "CANCELLED" ? count["CANCELLED"] > 0
                                 : state == "FAILED"  ? count["FAILED"] > 0 && count["CANCELLED"] == 0
                                                      : count["COMPLETED"] == total;
      if (!state_follows) {
        v.push_back(what + " but its jobs are " + std::to_string(count["COMPLETED"]) + " COMPLETED, " +
                    std::to_string(count["FAILED"]) + " FAILED, " + std::to_string(count["CANCELLED"]) + " CANCELLED");
      }
    } else {
      if (has_finished_at) v.push_back(what + " with finished_at set");
      if (!launcher && total > 0 && ended == total) v.push_back(what + " but all " + std::to_string(total) + " of its jobs have ended");
    }
  }
  return v;
}

std::vector<std::string> check_invariants(const InvariantInput& input) {
  std::vector<std::string> violations;
  try {
    violations = check_database(input);
  } catch (const std::exception& e) {
    return {"database " + input.db_path + " cannot be checked: " + e.what()};
  }
  if (input.cluster_dir.empty()) return violations;
  // Processes first, then the database: a worker seen alive was launched under a lease committed before.
  const auto deadline = std::chrono::steady_clock::now() + input.worker_grace;
  std::vector<std::string> workers;
  while (true) {
    const auto live = find_workers(input.cluster_dir);
    try {
      store::Database db(input.db_path, /*read_only=*/true);
      Snapshot snapshot;
      {
        ReadSnapshot read(db);
        snapshot = read_snapshot(db);
      }
      workers = check_workers(live, snapshot);
    } catch (const std::exception& e) {
      workers = {std::string("database cannot be read for the worker check: ") + e.what()};
    }
    if (workers.empty() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto grace_ms = std::to_string(input.worker_grace.count());
  for (auto& w : workers) violations.push_back(w + " (still so after " + grace_ms + " ms)");
  return violations;
}

}  // namespace themis::faults
