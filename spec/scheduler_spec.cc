#include "spec/scheduler_spec.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

#include "spec/toml_scheduler.h"
#include "core/toml_integer.h"

namespace themis::spec {
namespace {

std::string position(const std::string& source, const toml::source_region& region) {
  return source + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column) + ": ";
}

// "scheduler.<field>: <reason>" at the node; an empty field names the table itself.
[[noreturn]] void bad(const std::string& source, const toml::node& node, const std::string& field,
                      const std::string& reason) {
  throw std::invalid_argument(position(source, node.source()) + (field.empty() ? "scheduler" : "scheduler." + field) +
                              ": " + reason);
}

std::string shown(const toml::node& node) {
  std::ostringstream out;
  if (node.is_string()) {
    out << '"' << *node.value<std::string>() << '"';
  } else if (node.is_integer()) {
    out << *toml_integer(node);
  } else if (node.is_floating_point()) {
    out << *node.value<double>();
  } else if (node.is_boolean()) {
    out << (*node.value<bool>() ? "true" : "false");
  } else {
    out << (node.is_table() ? "a table" : node.is_array() ? "an array" : "a date or time");
  }
  return out.str();
}

// A finite number (integer or float) of at least `min`.
double number_at_least(const std::string& source, const toml::node& node, const std::string& field, double min,
                       const std::string& what) {
  const auto v = node.value<double>();
  if (!(node.is_integer() || node.is_floating_point()) || !v || !std::isfinite(*v) || !(*v >= min)) {
    bad(source, node, field, "must be " + what + ", got " + shown(node));
  }
  return *v;
}

bool power_of_two(int n) { return n >= 1 && (n & (n - 1)) == 0; }

}  // namespace

SchedulerTable scheduler_table_of(const toml::table& root, const std::string& source, int jobs) {
  SchedulerTable spec;
  const auto* node = root.get("scheduler");
  if (!node) return spec;
  const auto* table = node->as_table();
  if (!table) bad(source, *node, "", "must be a table, got " + shown(*node));
  spec.present = true;
  const std::set<std::string> known = {"iterations", "kind", "launcher", "max_restarts", "phase_iterations",
                                       "serial_iter_time", "slowdown"};
  for (const auto& [key, value] : *table) {
    if (!known.count(std::string(key.str()))) {
      (void)value;
      throw std::invalid_argument(position(source, key.source()) + "scheduler." + std::string(key.str()) +
                                  ": unknown key (known: iterations, kind, launcher, max_restarts, phase_iterations, "
                                  "serial_iter_time, slowdown)");
    }
  }
  if (const auto* l = table->get("launcher")) {
    const auto v = l->value<std::string>();
    if (!l->is_string() || (*v != "coordinator" && *v != "foreground")) {
      bad(source, *l, "launcher", "must be \"coordinator\" or \"foreground\"");
    }
    spec.started_by_coordinator = *v == "coordinator";
  }
  const auto* kind_node = table->get("kind");
  if (kind_node) {
    const auto kind = kind_node->value<std::string>();
    if (!kind_node->is_string() || (*kind != "all-jobs" && *kind != "successive-halving")) {
      bad(source, *kind_node, "kind", "must be \"all-jobs\" or \"successive-halving\", got " + shown(*kind_node));
    }
    spec.kind = *kind == "all-jobs" ? SchedulerKind::kAllJobs : SchedulerKind::kSuccessiveHalving;
  }
  const auto* iterations = table->get("iterations");
  const auto* phases = table->get("phase_iterations");
  if (spec.kind == SchedulerKind::kAllJobs) {
    if (phases) bad(source, *phases, "phase_iterations", "only for kind = \"successive-halving\" (use iterations)");
    if (iterations) spec.phase_iterations = {number_at_least(source, *iterations, "iterations", 1, "a number >= 1")};
  } else {
    if (iterations) bad(source, *iterations, "iterations", "not for successive halving (use phase_iterations)");
    if (!power_of_two(jobs)) {
      bad(source, *kind_node, "kind",
          "successive halving needs a power-of-two number of jobs (jobs must be a power of two, got " +
              std::to_string(jobs) + " from [hyperparameters])");
    }
    if (!phases) {
      throw std::invalid_argument(position(source, node->source()) +
                                  "scheduler.phase_iterations: required for successive halving");
    }
    if (!phases->is_array() || phases->as_array()->empty()) {
      bad(source, *phases, "phase_iterations", "must be a non-empty array of numbers >= 1");
    }
    const int max_phases = static_cast<int>(std::log2(jobs)) + 1;
    if (static_cast<int>(phases->as_array()->size()) > max_phases) {
      bad(source, *phases, "phase_iterations",
          "has " + std::to_string(phases->as_array()->size()) + " phases; " + std::to_string(jobs) +
              " jobs allow at most " + std::to_string(max_phases));
    }
    spec.phase_iterations.clear();
    for (const auto& v : *phases->as_array()) {
      spec.phase_iterations.push_back(number_at_least(source, v, "phase_iterations", 1, "a number >= 1"));
    }
  }
  if (const auto* t = table->get("serial_iter_time")) {
    spec.serial_iter_time = number_at_least(source, *t, "serial_iter_time", 0, "a positive number of seconds");
    if (!(spec.serial_iter_time > 0)) bad(source, *t, "serial_iter_time", "must be a positive number of seconds, got 0");
  }
  if (const auto* r = table->get("max_restarts")) {
    const auto v = toml_integer(*r);
    if (!v || *v < 0 || *v > 1000) {
      bad(source, *r, "max_restarts", "must be an integer 0..1000, got " + shown(*r));
    }
    spec.max_restarts = static_cast<int>(*v);
  }
  if (const auto* node_s = table->get("slowdown")) {
    const auto* levels = node_s->as_table();
    if (!levels) bad(source, *node_s, "slowdown", "must be a table of numbers >= 1 (same_slot, same_machine, same_rack, cross_rack), got " + shown(*node_s));
    for (const auto& [key, value] : *levels) {
      const std::string name(key.str());
      const auto known_key = std::find(kSlowdownKeys.begin(), kSlowdownKeys.end(), name);
      if (known_key == kSlowdownKeys.end())
        throw std::invalid_argument(position(source, key.source()) + "scheduler.slowdown." + name +
                                    ": unknown key (known: same_slot, same_machine, same_rack, cross_rack)");
      spec.slowdown[static_cast<std::size_t>(known_key - kSlowdownKeys.begin())] =
          number_at_least(source, value, "slowdown." + name, 1, "a number >= 1 (how many times slower; 1: no slowdown)");
    }
  }
  return spec;
}

SchedulerTable parse_scheduler_table(const std::string& toml_text, const std::string& source, int jobs) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    throw std::invalid_argument(position(source, e.source()) + std::string(e.description()));
  }
  return scheduler_table_of(root, source, jobs);
}

}  // namespace themis::spec
