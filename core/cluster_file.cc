#include "core/cluster_file.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <toml++/toml.h>

#include "core/closest_name.h"
#include "core/toml_integer.h"

namespace themis {
namespace {

[[noreturn]] void fail(std::string_view source, const toml::source_region& where, std::string_view field,
                       std::string_view reason) {
  std::ostringstream out;
  out << source << ':' << where.begin.line << ':' << where.begin.column << ": " << field << ": " << reason;
  throw ClusterFileError(out.str());
}

std::string required_string(std::string_view source, const toml::table& t, std::string_view key,
                            std::string_view context) {
  const toml::node* n = t.get(key);
  if (n == nullptr) fail(source, t.source(), std::string(context) + "." + std::string(key), "is required");
  auto v = n->value<std::string>();
  if (!v || v->empty())
    fail(source, n->source(), std::string(context) + "." + std::string(key), "must be a non-empty string");
  return *v;
}

}  // namespace

ClusterSpec parse_cluster_toml(std::string_view text, std::string_view source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    fail(source, e.source(), "syntax", e.description());
  }
  ClusterSpec spec;
  for (auto&& [key, node] : root) {
    const std::vector<std::string> known{"name", "machine"};
    const std::string k(key.str());
    if (k != "name" && k != "machine")
      fail(source, key.source(), k, "unknown key" + did_you_mean(k, known) + " (expected name, [[machine]])");
  }
  spec.name = required_string(source, root, "name", "cluster");
  const toml::array* machines = root["machine"].as_array();
  if (machines == nullptr || machines->empty())
    fail(source, root.source(), "machine", "at least one [[machine]] table is required");

  for (std::size_t i = 0; i < machines->size(); ++i) {
    const toml::table* m = (*machines)[i].as_table();
    const std::string ctx = "machine[" + std::to_string(i) + "]";
    if (m == nullptr) fail(source, (*machines)[i].source(), ctx, "must be a table");
    for (auto&& [key, node] : *m) {
      const std::string_view k = key.str();
      const std::vector<std::string> known{"name", "rack", "racks", "slots", "count"};
      if (std::find(known.begin(), known.end(), k) == known.end())
        fail(source, key.source(), ctx + "." + std::string(k),
             "unknown key" + did_you_mean(k, known) + " (expected name, rack, racks, slots, count)");
    }
    const std::string name = required_string(source, *m, "name", ctx);

    std::vector<int> slots;
    const toml::array* slot_array = (*m)["slots"].as_array();
    if (slot_array == nullptr || slot_array->empty())
      fail(source, m->source(), ctx + ".slots", "is required: a list of GPUs per slot, e.g. [2, 2]");
    for (const toml::node& s : *slot_array) {
      auto v = toml_integer(s);
      if (!v || *v <= 0 || *v > 64)
        fail(source, s.source(), ctx + ".slots", "each slot holds 1 to 64 GPUs");
      slots.push_back(static_cast<int>(*v));
    }

    std::vector<std::string> racks;
    if (const toml::node* r = m->get("rack")) {
      auto v = r->value<std::string>();
      if (!v || v->empty()) fail(source, r->source(), ctx + ".rack", "must be a non-empty string");
      racks.push_back(*v);
    }
    if (const toml::node* r = m->get("racks")) {
      if (!racks.empty()) fail(source, r->source(), ctx + ".racks", "give either rack or racks, not both");
      const toml::array* arr = r->as_array();
      if (arr == nullptr || arr->empty()) fail(source, r->source(), ctx + ".racks", "must be a non-empty list");
      for (const toml::node& e : *arr) {
        auto v = e.value<std::string>();
        if (!v || v->empty()) fail(source, e.source(), ctx + ".racks", "entries must be non-empty strings");
        racks.push_back(*v);
      }
    }
    if (racks.empty()) racks.push_back("rack0");

    int64_t count = 1;
    bool grouped = false;
    if (const toml::node* c = m->get("count")) {
      auto v = toml_integer(*c);
      if (!v || *v < 1 || *v > 100000) fail(source, c->source(), ctx + ".count", "must be an integer >= 1");
      count = *v;
      grouped = true;
    }
    const int width = static_cast<int>(std::to_string(count).size()) < 2 ? 2
                                                                           : static_cast<int>(std::to_string(count).size());
    for (int64_t k = 0; k < count; ++k) {
      std::string machine_name = name;
      if (grouped) {
        std::string num = std::to_string(k + 1);
        machine_name += std::string(static_cast<std::size_t>(width) - std::min(num.size(), static_cast<std::size_t>(width)), '0') + num;
      }
      spec.machines.push_back({machine_name, racks[static_cast<std::size_t>(k) % racks.size()], slots});
    }
  }
  try {
    Cluster check(spec);  // duplicate names and the like, reported against the file
  } catch (const std::invalid_argument& e) {
    fail(source, root.source(), "machine", e.what());
  }
  return spec;
}

ClusterSpec load_cluster_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ClusterFileError(path.string() + ": cannot open cluster file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_cluster_toml(text.str(), path.string());
}

}  // namespace themis
