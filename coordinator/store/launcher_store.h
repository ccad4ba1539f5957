#pragma once
// The SQL of an app's launcher (coordinator/launchers.cc, docs/launcher.md): the app rows and bookkeeping its
// attach, its status reports and its supervision read and write.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

class LauncherStore {
 public:
  explicit LauncherStore(Database& db) : db_(db) {}

  // The principal that submitted `app`; nullopt when there is no such app.
  std::optional<std::string> owner(std::int64_t app);
  // True when `app` is COMPLETED, FAILED or CANCELLED.
  bool has_ended(std::int64_t app);

  // What an attach tells the launcher about its app. An app with no row reads as empty (its state "").
  struct AttachedApp {
    std::string name, spec;
    double submitted_at = 0;
    std::int64_t gpus_per_job = 0, max_concurrent_jobs = 0;
    std::string state;
  };
  AttachedApp attached_app(std::int64_t app);
  // Apps that are PENDING or RUNNING.
  std::int64_t active_app_count();
  // Every host by its first GPU, with how many of its GPUs each of its slots holds, by slot.
  struct HostLayout {
    std::string name, rack;
    std::int64_t first_gpu = 0;
    std::vector<std::uint32_t> gpus_per_slot;
  };
  std::vector<HostLayout> host_layouts();
  struct AttachedJob {
    std::int64_t job = 0;
    std::string hparams;
    std::int64_t attempt = 0;
    std::string state;
  };
  std::vector<AttachedJob> jobs_of(std::int64_t app);
  // The resumable state the app's launcher reported last (its latest LauncherState event).
  std::optional<std::string> saved_launcher_state(std::int64_t app);

  void set_rho(std::int64_t app, double rho);
  // True when `app`'s first-iteration probe is running (false also when there is no such app).
  bool probe_running(std::int64_t app);

  // Ending a launcher's app: its jobs that still run (STARTING or RUNNING); its leases: LeaseReleaseStore::release_app.
  std::vector<std::int64_t> running_jobs(std::int64_t app);

  // The submitted spec of `app`; nullopt when there is no such app.
  std::optional<std::string> spec(std::int64_t app);
  // The app's owner with how many times its launcher was started (LauncherStarted events), for the next start.
  struct LauncherStarts {
    std::string owner;
    std::int64_t starts = 0;
  };
  std::optional<LauncherStarts> launcher_starts(std::int64_t app);
  // The ids of the apps that are PENDING or RUNNING, in order.
  std::vector<std::int64_t> active_app_ids();
  // The app's state and owner, for a launcher a nodelet reports; nullopt when there is no such app.
  struct StateAndOwner {
    std::string state, owner;
  };
  std::optional<StateAndOwner> state_and_owner(std::int64_t app);
  // The messages of the app's LauncherStarted events, latest first.
  std::vector<std::string> launcher_started_messages(std::int64_t app);

 private:
  Database& db_;
};

}  // namespace themis::store
