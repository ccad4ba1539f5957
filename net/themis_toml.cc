#include "net/themis_toml.h"

#include <algorithm>
#include <stdexcept>

#include "core/closest_name.h"

namespace themis::net {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::string toml_position(const std::string& path, const toml::source_region& where) {
  return path + ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column) + ": ";
}

toml::table parse_toml_file(const std::string& path) {
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    if (e.source().begin.line == 0) throw std::invalid_argument(path + ": " + std::string(e.description()));
    throw std::invalid_argument(toml_position(path, e.source()) + std::string(e.description()));
  }
}

void throw_unknown_key(const std::string& path, const toml::key& key, std::string_view table_name,
                       const std::vector<std::string>& known) {
  const std::string k(key.str());
  throw std::invalid_argument(toml_position(path, key.source()) + std::string(table_name) + "." + k + ": unknown key" +
                              did_you_mean(k, known) + "; known keys: " + joined(known));
}

void reject_unknown_keys(const std::string& path, const toml::table& table, std::string_view table_name,
                         const std::vector<std::string>& known) {
  for (const auto& [key, value] : table) {
    if (std::find(known.begin(), known.end(), key.str()) == known.end()) throw_unknown_key(path, key, table_name, known);
  }
}

void check_themis_toml_layout(const std::string& path, const toml::table& root) {
  // [cli] holds themisctl's defaults (design: `output`); accepted so one themis.toml serves every version.
  const std::vector<std::string> sections{"cluster", "coordinator", "nodelet", "retry", "admission", "users", "cli"};
  for (const auto& [key, value] : root) {
    const std::string k(key.str());
    const auto& where = key.source().begin.line > 0 ? key.source() : value.source();
    if (std::find(sections.begin(), sections.end(), k) == sections.end()) {
      const auto near = closest_name(k, sections);
      throw std::invalid_argument(toml_position(path, where) + (value.is_table() ? "[" + k + "]: unknown section" : k + ": unknown key") +
                                  (near ? " (did you mean [" + *near + "]?)" : "") + "; sections: " + joined(sections));
    }
    if (!value.is_table()) throw std::invalid_argument(toml_position(path, where) + k + ": must be a table ([" + k + "])");
  }
  if (const auto* cluster = root["cluster"].as_table()) {
    reject_unknown_keys(path, *cluster, "cluster", {"name", "coordinator", "coordinator_key"});
    for (const auto& [key, value] : *cluster) {
      if (!value.is_string()) {
        throw std::invalid_argument(toml_position(path, value.source()) + "cluster." + std::string(key.str()) + ": must be a string");
      }
    }
  }
  // [users] is the coordinator's, checked where it is read (coordinator/config.cc, load_users_table).
  if (const auto* cli = root["cli"].as_table()) reject_unknown_keys(path, *cli, "cli", {"output"});
}

}  // namespace themis::net
