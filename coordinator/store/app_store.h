#pragma once
// The SQL of submit and cancel (coordinator/requests.cc): the apps and jobs rows a submit writes, the
// earlier app a repeated submit token names, and what a cancel reads and releases.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

class AppStore {
 public:
  explicit AppStore(Database& db) : db_(db) {}

  // The app an earlier Submit of `owner` with `token` made, with its number of jobs.
  struct SubmittedApp {
    std::int64_t app = 0;
    std::string name, spec;
    std::uint32_t jobs = 0;
  };
  std::optional<SubmittedApp> app_of_token(const std::string& owner, const std::string& token);
  // Whether a SubmitRepeated event of `app` is already recorded.
  bool submit_repeat_recorded(std::int64_t app);

  // A new PENDING app as a submit stores it (env is the spec's env as a JSON object).
  struct NewApp {
    std::string name, owner, spec;
    std::int64_t gpus_per_job = 1, max_concurrent_jobs = 0;
    std::string workdir, env_json, checkpoint_dir;
    std::int64_t grace_ms = 0;
    double submitted_at = 0;
    std::optional<std::string> submit_token;
  };
  // Returns the new app's id.
  std::int64_t insert_app(const NewApp& app);
  // A new PENDING job (reason "New"); `command_json` is its command with the placeholders expanded.
  void insert_job(std::int64_t app, std::int64_t job, const std::string& hparams_json, const std::string& command_json,
                  double now);
  // apps.probe = 'waiting': the app's first job is probed before the others run (docs/reliability.md "Probe").
  void mark_probe_waiting(std::int64_t app);
  // apps.admission: why the app waits (NULL once admitted; admit_apps decides).
  void set_admission(std::int64_t app, const std::string& admission);

  struct Ownership {
    std::string owner, state;
  };
  std::optional<Ownership> ownership(std::int64_t app);
  // Jobs of `app` a cancel stops: PENDING, STARTING or RUNNING.
  std::vector<std::int64_t> cancellable_jobs(std::int64_t app);

 private:
  Database& db_;
};

}  // namespace themis::store
