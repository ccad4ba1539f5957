#include "net/authorized_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "net/curve_keys.h"

namespace themis::net {
namespace {

// A new authorized keys file is 0640 with the group of its directory, whatever the umask: root enrolls
// into /etc/themis (root:themis 0750) and the coordinator, running as the themis user, reads the file
// through that group (docs/admin.md, "Setting up a cluster"). An existing file keeps its owner and mode.
void create_key_list(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  struct stat dir {};
  const auto parent = std::filesystem::absolute(path).parent_path();
  const bool ok = ::stat(parent.c_str(), &dir) == 0 && (::fchown(fd, static_cast<uid_t>(-1), dir.st_gid) == 0 || errno == EPERM) &&
                  ::fchmod(fd, 0640) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error(path + ": cannot set the group and mode: " + std::strerror(error));
}

}  // namespace

std::string to_string(Role role) {
  switch (role) {
    case Role::kNode: return "node";
    case Role::kUser: return "user";
    case Role::kAdmin: return "admin";
  }
  return "user";
}

std::optional<Role> parse_role(const std::string& text) {
  if (text == "node") return Role::kNode;
  if (text == "user") return Role::kUser;
  if (text == "admin") return Role::kAdmin;
  return std::nullopt;
}

bool is_valid_principal_name(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  const auto is_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (!is_alnum(name[0]) && name[0] != '_') return false;
  for (const char c : name) {
    if (!is_alnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

std::vector<Principal> read_authorized_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open authorized keys file");
  std::vector<Principal> out;
  std::set<std::string> keys;
  std::set<std::string> names;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    // A comment starts with '#' at the beginning of a field; Z85 keys may contain '#' themselves.
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
        line.resize(i);
        break;
      }
    }
    std::istringstream fields(line);
    std::string name, key, role_text, extra;
    if (!(fields >> name)) continue;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (!(fields >> key)) throw std::runtime_error(where + "missing public key after principal '" + name + "'");
    if (!is_z85_key(key)) throw std::runtime_error(where + "public key of '" + name + "' is not 40 characters of Z85");
    if (!(fields >> role_text)) throw std::runtime_error(where + "missing role (node|user|admin) for '" + name + "'");
    const auto role = parse_role(role_text);
    if (!role) throw std::runtime_error(where + "role '" + role_text + "' is not one of node|user|admin");
    if (fields >> extra) throw std::runtime_error(where + "unexpected field '" + extra + "'");
    if (!keys.insert(key).second) throw std::runtime_error(where + "key of '" + name + "' is enrolled twice");
    if (!names.insert(name).second) throw std::runtime_error(where + "principal '" + name + "' is enrolled twice");
    out.push_back({name, key, *role});
  }
  return out;
}

void append_authorized_key(const std::string& path, const Principal& principal) {
  if (!is_valid_principal_name(principal.name)) {
    throw std::invalid_argument("principal name '" + principal.name + "' is not valid: " + kPrincipalNameRule);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    for (const auto& existing : read_authorized_keys(path)) {
      if (existing.name == principal.name) throw std::runtime_error(path + ": principal '" + principal.name + "' already enrolled");
      if (existing.public_key == principal.public_key) throw std::runtime_error(path + ": key already enrolled as '" + existing.name + "'");
    }
  }
  if (!is_z85_key(principal.public_key)) throw std::runtime_error("public key is not 40 characters of Z85");
  if (::stat(path.c_str(), &st) != 0) create_key_list(path);
  std::ofstream out(path, std::ios::app);
  out << principal.name << ' ' << principal.public_key << ' ' << to_string(principal.role) << '\n';
  if (!out) throw std::runtime_error(path + ": cannot append");
}

std::optional<Principal> parse_user_id(const std::string& user_id) {
  const auto colon = user_id.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const auto role = parse_role(user_id.substr(0, colon));
  if (!role) return std::nullopt;
  Principal p;
  p.role = *role;
  p.name = user_id.substr(colon + 1);
  return p;
}

}  // namespace themis::net
