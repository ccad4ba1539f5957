#pragma once
// The coordinator's list of enrolled keys, one per line, ssh authorized_keys style:
//   <principal> <z85 public key> <role>      # role: node | user | admin
// The ZAP handler admits only these keys and tags each connection "<role>:<principal>".
#include <optional>
#include <string>
#include <vector>

namespace themis::net {

enum class Role { kNode, kUser, kAdmin };
std::string to_string(Role role);
std::optional<Role> parse_role(const std::string& text);

struct Principal {
  std::string name;
  std::string public_key;
  Role role = Role::kUser;
  std::string user_id() const { return to_string(role) + ":" + name; }
};

// A principal is a host name or a Unix account name: 1 to 128 characters of A-Z a-z 0-9 . _ -, the first a
// letter, a digit or '_'. themis-coordinator enroll refuses any other name.
bool is_valid_principal_name(const std::string& name);
inline constexpr const char* kPrincipalNameRule =
    "1 to 128 characters of A-Z a-z 0-9 . _ -, starting with a letter, a digit or _";

// Throws std::runtime_error "file:line: reason" on a malformed line or a duplicate key.
std::vector<Principal> read_authorized_keys(const std::string& path);

// Appends one entry (creating the file with mode 0600); refuses invalid or duplicate names and duplicate keys.
void append_authorized_key(const std::string& path, const Principal& principal);

// "node:gpu01" -> {Role::kNode, "gpu01"}; nullopt for anything else.
std::optional<Principal> parse_user_id(const std::string& user_id);

}  // namespace themis::net
