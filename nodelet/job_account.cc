#include "nodelet/job_account.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace themis::nodelet {

namespace {
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

// What a job may inherit from the nodelet's environment; everything else (the nodelet's credentials
// directory, its notify socket, whatever its service manager set) stays behind.
bool inherited_by_jobs(const std::string& name) {
  return name == "PATH" || name == "LANG" || name == "LANGUAGE" || name == "TZ" || name == "LD_LIBRARY_PATH" ||
         starts_with(name, "LC_") || starts_with(name, "THEMIS_") || starts_with(name, "NCCL_") ||
         starts_with(name, "CUDA_");
}

// passwd entry of `name`, or of `uid` when `name` is empty; false when there is none.
bool look_up(const std::string& name, uid_t uid, JobAccount& out) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  const int error = name.empty() ? ::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found)
                                 : ::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (error != 0 || !found) return false;
  out.uid = entry.pw_uid;
  out.gid = entry.pw_gid;
  out.name = entry.pw_name;
  out.home = entry.pw_dir ? entry.pw_dir : "/";
  out.shell = entry.pw_shell && *entry.pw_shell ? entry.pw_shell : "/bin/sh";
  return true;
}

std::string errno_text(int error) { return std::strerror(error); }
}  // namespace

bool switches_users(bool insecure) { return !insecure && ::geteuid() == 0; }

JobAccount resolve_job_account(const std::string& account, bool switch_user, bool allow_root, const std::string& host) {
  JobAccount a;
  if (!switch_user) {
    if (!look_up("", ::geteuid(), a)) {
      a.uid = ::geteuid();
      a.gid = ::getegid();
      a.home = "/";
      a.shell = "/bin/sh";
    }
    a.switch_user = false;
    return a;
  }
  if (account.empty()) {
    throw AccountRefused("themis-nodelet on " + host +
                         ": the coordinator named no Unix account for this app; a nodelet running as root starts "
                         "jobs only as the app owner's account (upgrade the coordinator)");
  }
  if (!look_up(account, 0, a)) {
    throw AccountRefused("themis-nodelet on " + host + ": Unix account '" + account +
                         "' does not exist on this host; create it, or map the app's owner to an existing account "
                         "in the coordinator's [users] table");
  }
  if (a.uid == 0 && !allow_root) {
    throw AccountRefused("themis-nodelet on " + host + ": Unix account '" + account +
                         "' is uid 0 (root); this host runs jobs as root only with nodelet.allow_root_jobs = true");
  }
  int count = 64;
  a.groups.resize(static_cast<std::size_t>(count));
  while (::getgrouplist(a.name.c_str(), a.gid, a.groups.data(), &count) < 0) {
    a.groups.resize(static_cast<std::size_t>(count) * 2);
    count = static_cast<int>(a.groups.size());
  }
  a.groups.resize(static_cast<std::size_t>(count));
  a.switch_user = true;
  return a;
}

const char* become(const JobAccount& account) {
  if (!account.switch_user) return nullptr;
  if (::setgroups(account.groups.size(), account.groups.data()) != 0) return "setgroups";
  if (::setgid(account.gid) != 0) return "setgid";
  if (::setuid(account.uid) != 0) return "setuid";
  if (account.uid != 0 && ::setuid(0) == 0) {
    errno = EPERM;
    return "setuid (root could be regained)";
  }
  return nullptr;
}

std::vector<std::string> job_environment(const char* const* inherited, const JobAccount& account,
                                         const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::pair<std::string, std::string>> vars;
  auto put = [&vars](const std::string& name, const std::string& value) {
    for (auto& v : vars) {
      if (v.first == name) {
        v.second = value;
        return;
      }
    }
    vars.emplace_back(name, value);
  };
  put("PATH", kDefaultPath);
  for (auto entry = inherited; entry && *entry; ++entry) {
    const std::string text = *entry;
    const auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0) continue;
    const std::string name = text.substr(0, equals);
    if (inherited_by_jobs(name)) put(name, text.substr(equals + 1));
  }
  put("HOME", account.home);
  put("USER", account.name);
  put("LOGNAME", account.name);
  put("SHELL", account.shell);
  for (const auto& [name, value] : extra) put(name, value);
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

int open_private_directory(const std::string& base, const std::vector<std::string>& components,
                           const JobAccount& account) {
  int fd = ::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + base + ": " + errno_text(errno));
  std::string path = base;
  for (const auto& component : components) {
    path += "/" + component;
    if (component.empty() || component == "." || component == ".." || component.find('/') != std::string::npos) {
      ::close(fd);
      throw std::runtime_error("not a directory name: '" + component + "' in " + path);
    }
    if (::mkdirat(fd, component.c_str(), 0700) != 0 && errno != EEXIST) {
      const int error = errno;
      ::close(fd);
      throw std::runtime_error("cannot create " + path + ": " + errno_text(error));
    }
    const int next = ::openat(fd, component.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int error = errno;
    ::close(fd);
    if (next < 0) throw std::runtime_error("cannot open " + path + " (a symbolic link?): " + errno_text(error));
    fd = next;
    if ((account.switch_user && ::fchown(fd, account.uid, account.gid) != 0) || ::fchmod(fd, 0700) != 0) {
      const int failed = errno;
      ::close(fd);
      throw std::runtime_error("cannot make " + path + " private to " + account.name + ": " + errno_text(failed));
    }
  }
  return fd;
}

int open_private_file(int dir_fd, const std::string& name, const JobAccount& account) {
  constexpr int kFlags = O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC;  // read too: the nodelet reads the tail from it
  int fd = ::openat(dir_fd, name.c_str(), kFlags | O_CREAT | O_EXCL, 0600);
  const bool created = fd >= 0;
  if (!created && errno == EEXIST) fd = ::openat(dir_fd, name.c_str(), kFlags);
  if (fd < 0) throw std::runtime_error("cannot open " + name + ": " + errno_text(errno));
  struct stat st {};
  const uid_t owner = account.switch_user ? account.uid : ::geteuid();
  // An existing file must be a plain file of the account's own: not a hard link the job made to a file it
  // could not otherwise write, which the chown below would hand over to it.
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 || (!created && st.st_uid != owner)) {
    ::close(fd);
    throw std::runtime_error("refusing to write " + name + ": not a plain file of " + account.name + "'s own");
  }
  if ((account.switch_user && ::fchown(fd, account.uid, account.gid) != 0) || ::fchmod(fd, 0600) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error("cannot make " + name + " private to " + account.name + ": " + errno_text(error));
  }
  return fd;
}

bool make_directories(char* path) {
  if (!path || !*path) return true;
  for (char* p = path + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    const bool made = ::mkdir(path, 0700) == 0 || errno == EEXIST;
    *p = '/';
    if (!made) return false;
  }
  return ::mkdir(path, 0700) == 0 || errno == EEXIST;
}

}  // namespace themis::nodelet
