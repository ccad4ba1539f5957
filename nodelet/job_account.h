#pragma once
// The Unix account a job or an app launcher runs as (docs/admin.md, "Job accounts"). The coordinator names
// the account in its Launch and StartLauncher orders; the nodelet resolves it before fork (getpwnam and
// getgrouplist are not async-signal-safe) and the child takes it on before exec. A nodelet that is not
// root, or runs in insecure mode, does not switch: its jobs run as its own user.
#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace themis::nodelet {

struct JobAccount {
  bool switch_user = false;  // false: the child keeps the nodelet's own credentials
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups, as initgroups(3) would set them
  std::string name;
  std::string home;
  std::string shell;
};

// An account the nodelet will not run a job as: the message names the account, the host and why.
class AccountRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether jobs take on their account: only a root nodelet outside insecure mode can, and does.
bool switches_users(bool insecure);

// `account` as the job's credentials. Without switching, the nodelet's own user (whatever `account` says).
// Throws AccountRefused for an empty or unknown account, and for uid 0 unless `allow_root`.
JobAccount resolve_job_account(const std::string& account, bool switch_user, bool allow_root, const std::string& host);

// In the forked child, before exec: setgroups, setgid, setuid, and a check that root cannot be regained.
// Async-signal-safe. Returns nullptr on success, else the name of the call that failed (errno is set).
const char* become(const JobAccount& account);

// The whole environment a job starts with, "NAME=value" each: from the nodelet's own `inherited` only PATH
// (a default when unset), the locale, TZ, LD_LIBRARY_PATH and the THEMIS_*, NCCL_* and CUDA_* variables;
// the account's HOME, USER, LOGNAME and SHELL; then `extra` (later entries win).
std::vector<std::string> job_environment(const char* const* inherited, const JobAccount& account,
                                         const std::vector<std::pair<std::string, std::string>>& extra);

// Creates the directories `components` below `base` (a directory the nodelet owns) without following
// symbolic links, each owned by the account and mode 0700, and opens the last. Returns an O_CLOEXEC
// descriptor; throws std::runtime_error naming the path that failed.
int open_private_directory(const std::string& base, const std::vector<std::string>& components,
                           const JobAccount& account);

// Opens (appending, and for reading) or creates `name` in the directory `dir_fd`, not through a symbolic
// link, owned by the account and mode 0600. Returns an O_CLOEXEC descriptor; throws std::runtime_error.
int open_private_file(int dir_fd, const std::string& name, const JobAccount& account);

// In the forked child, as the job's account: creates `path` and its missing parents, mode 0700.
// `path` is a writable copy the call modifies and restores. Async-signal-safe. Returns false with errno set.
bool make_directories(char* path);

}  // namespace themis::nodelet
