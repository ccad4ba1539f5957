#pragma once
// What a daemon checks before it starts, and what --check-config reports: files readable by the user the
// process runs as, directories writable, endpoints bindable. Each problem is permanent (the configuration or
// the files must change: exit 78, EX_CONFIG, which the systemd units do not restart) or transient (it may go
// away by itself, such as a port still held: exit 75, EX_TEMPFAIL, restarted). docs/admin.md "Errors and exit
// codes".
#include <string>
#include <vector>

namespace themis::net {

inline constexpr int kExitConfig = 78;     // EX_CONFIG: permanent; systemd RestartPreventExitStatus=78
inline constexpr int kExitTempFail = 75;   // EX_TEMPFAIL: transient; restarted

struct PreflightProblem {
  std::string message;
  bool permanent = true;
};

class Preflight {
 public:
  void permanent(std::string message) { problems_.push_back({std::move(message), true}); }
  void transient(std::string message) { problems_.push_back({std::move(message), false}); }

  // `what` names the setting, e.g. "coordinator.secret_key". Opens the file for reading as this process.
  void file_readable(const std::string& path, const std::string& what);
  // The directory exists and this process may create files in it; with `created_at_start`, a missing one is
  // fine when its nearest existing ancestor is writable (the daemon creates it, parents included).
  void directory_writable(const std::string& path, const std::string& what, bool created_at_start = false);
  // Binds a ZeroMQ socket to `endpoint` and releases it. "Address already in use" is transient; a bad endpoint,
  // an address not on this host or a privileged port is permanent.
  void endpoint_bindable(const std::string& endpoint, const std::string& what);

  bool ok() const { return problems_.empty(); }
  const std::vector<PreflightProblem>& problems() const { return problems_; }
  // 0 when ok; 78 when any problem is permanent; else 75.
  int exit_code() const;
  // One problem per line, each prefixed by "error: " or "error (transient): ".
  std::string report() const;

 private:
  std::vector<PreflightProblem> problems_;
};

}  // namespace themis::net
