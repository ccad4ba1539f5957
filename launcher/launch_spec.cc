#include "launcher/launch_spec.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <toml++/toml.h>

namespace themis::launcher {
namespace {

[[noreturn]] void bad(const std::string& source, const toml::node& node, const std::string& field,
                      const std::string& reason) {
  const auto& s = node.source();
  throw std::invalid_argument(source + ":" + std::to_string(s.begin.line) + ":" + std::to_string(s.begin.column) +
                              ": scheduler." + field + ": " + reason);
}

double positive_number(const std::string& source, const toml::node& node, const std::string& field) {
  const auto v = node.value<double>();
  if (!v || !(*v > 0) || !std::isfinite(*v)) bad(source, node, field, "must be a positive number");
  return *v;
}

}  // namespace

LaunchSpec parse_launch_spec(const std::string& toml_text, const std::string& source, int jobs) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    const auto& s = e.source();
    throw std::invalid_argument(source + ":" + std::to_string(s.begin.line) + ":" + std::to_string(s.begin.column) +
                                ": " + std::string(e.description()));
  }
  LaunchSpec spec;
  spec.scheduler.jobs = jobs;
  spec.scheduler.phase_iterations = {100};
  const auto* node = root.get("scheduler");
  if (!node) return spec;
  const auto* table = node->as_table();
  if (!table) bad(source, *node, "", "must be a table");
  const std::set<std::string> known = {"kind", "phase_iterations", "iterations", "serial_iter_time", "max_restarts",
                                       "launcher"};
  for (const auto& [key, value] : *table) {
    if (!known.count(std::string(key.str()))) {
      bad(source, value, std::string(key.str()),
          "unknown key (known: iterations, kind, launcher, max_restarts, phase_iterations, serial_iter_time)");
    }
  }
  if (const auto* l = table->get("launcher")) {
    const auto v = l->value<std::string>();
    if (!v || (*v != "coordinator" && *v != "foreground")) {
      bad(source, *l, "launcher", "must be \"coordinator\" or \"foreground\"");
    }
    spec.started_by_coordinator = *v == "coordinator";
  }
  std::string kind = "all-jobs";
  if (const auto* k = table->get("kind")) {
    if (!k->is_string()) bad(source, *k, "kind", "must be \"all-jobs\" or \"successive-halving\"");
    kind = *k->value<std::string>();
    if (kind != "all-jobs" && kind != "successive-halving") {
      bad(source, *k, "kind", "must be \"all-jobs\" or \"successive-halving\", got \"" + kind + "\"");
    }
  }
  spec.scheduler.kind = kind == "all-jobs" ? SchedulerKind::kAllJobs : SchedulerKind::kSuccessiveHalving;
  const auto* iterations = table->get("iterations");
  const auto* phases = table->get("phase_iterations");
  if (spec.scheduler.kind == SchedulerKind::kAllJobs) {
    if (phases) bad(source, *phases, "phase_iterations", "only for kind = \"successive-halving\" (use iterations)");
    if (iterations) spec.scheduler.phase_iterations = {positive_number(source, *iterations, "iterations")};
  } else {
    if (iterations) bad(source, *iterations, "iterations", "not for successive halving (use phase_iterations)");
    if (!phases) throw std::invalid_argument(source + ": scheduler.phase_iterations: required for successive halving");
    if (!phases->is_array() || phases->as_array()->empty()) bad(source, *phases, "phase_iterations", "must be a non-empty array");
    spec.scheduler.phase_iterations.clear();
    for (const auto& v : *phases->as_array()) {
      spec.scheduler.phase_iterations.push_back(positive_number(source, v, "phase_iterations"));
    }
  }
  if (const auto* t = table->get("serial_iter_time")) spec.serial_iter_time = positive_number(source, *t, "serial_iter_time");
  if (const auto* r = table->get("max_restarts")) {
    const auto v = r->value<std::int64_t>();
    if (!r->is_integer() || !v || *v < 0 || *v > 1000) bad(source, *r, "max_restarts", "must be an integer 0..1000");
    spec.max_restarts = static_cast<int>(*v);
  }
  try {
    HyperparameterScheduler check(spec.scheduler);
  } catch (const std::invalid_argument& e) {
    bad(source, *node, "", e.what());
  }
  return spec;
}

std::string hparams_json(const std::map<std::string, std::string>& hparams, long long iterations) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, text] : hparams) {
    if (text == "true" || text == "false") {
      out[name] = text == "true";
      continue;
    }
    std::size_t used = 0;
    try {
      if (text.find_first_of(".eE") == std::string::npos) {
        const long long i = std::stoll(text, &used);
        if (used == text.size()) {
          out[name] = i;
          continue;
        }
      }
      const double d = std::stod(text, &used);
      if (used == text.size() && std::isfinite(d)) {
        out[name] = d;
        continue;
      }
    } catch (const std::exception&) {
    }
    out[name] = text;
  }
  out["iterations"] = iterations;
  return out.dump();
}

}  // namespace themis::launcher
