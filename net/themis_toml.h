#pragma once
// The shape of /etc/themis/themis.toml shared by every daemon that reads it (docs/admin.md): its sections,
// the [cluster] table, and strict key checks with "file:line:column" positions and a "did you mean".
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

namespace themis::net {

// "path:line:column: " of a key or a value.
std::string toml_position(const std::string& path, const toml::source_region& where);

// Parses `path`; a syntax error or a missing file throws std::invalid_argument "path:line:column: reason".
toml::table parse_toml_file(const std::string& path);

// Throws std::invalid_argument "path:line:column: <table>.<key>: unknown key (did you mean ...?); known: ...".
[[noreturn]] void throw_unknown_key(const std::string& path, const toml::key& key, std::string_view table_name,
                                    const std::vector<std::string>& known);

// Throws std::invalid_argument "path:line:column: <table>.<key>: unknown key (did you mean ...?); known: ..."
// for the first key of `table` not in `known`.
void reject_unknown_keys(const std::string& path, const toml::table& table, std::string_view table_name,
                         const std::vector<std::string>& known);

// Every daemon checks the parts of themis.toml that are not its own table: the top-level sections (an unknown
// one is an error), [cluster], [users] (principal -> Unix account strings) and [cli].
void check_themis_toml_layout(const std::string& path, const toml::table& root);

}  // namespace themis::net
