#include "spec/app_spec.h"

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <toml++/toml.h>

#include "spec/toml_scheduler.h"
#include "core/toml_integer.h"

namespace themis::spec {

namespace {

std::string where(const std::string& source, const toml::node& node) {
  const auto& s = node.source();
  return source + ":" + std::to_string(s.begin.line) + ":" + std::to_string(s.begin.column) + ": ";
}

[[noreturn]] void bad(const std::string& source, const toml::node& node, const std::string& field,
                      const std::string& reason) {
  throw std::invalid_argument(where(source, node) + field + ": " + reason);
}

void check_keys(const std::string& source, const toml::table& table, const std::string& prefix,
                const std::set<std::string>& allowed) {
  for (const auto& [key, node] : table) {
    if (!allowed.count(std::string(key.str()))) {
      std::string known;
      for (const auto& k : allowed) known += (known.empty() ? "" : ", ") + k;
      (void)node;
      const auto& at = key.source().begin;
      throw std::invalid_argument(source + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " + prefix +
                                  std::string(key.str()) + ": unknown key (known: " + known + ")");
    }
  }
}

std::string scalar_text(const std::string& source, const toml::node& node, const std::string& field) {
  if (auto s = node.value<std::string>()) return *s;
  if (node.is_integer()) return std::to_string(*toml_integer(node));
  if (node.is_floating_point()) {
    std::ostringstream out;
    out << *node.value<double>();
    return out.str();
  }
  if (auto b = node.value<bool>()) return *b ? "true" : "false";
  bad(source, node, field, "must be a string, number or boolean");
}

// A scalar (already checked by scalar_text) as JSON with its TOML type: 0.05 and 32 stay numbers.
std::string json_literal(const toml::node& node) {
  if (auto s = node.value<std::string>()) return nlohmann::json(*s).dump();
  if (node.is_integer()) return nlohmann::json(*toml_integer(node)).dump();
  if (node.is_floating_point()) return nlohmann::json(*node.value<double>()).dump();
  return nlohmann::json(*node.value<bool>()).dump();
}

int positive_int(const std::string& source, const toml::node& node, const std::string& field) {
  const auto v = toml_integer(node);
  if (!v || *v <= 0 || *v > 1'000'000) bad(source, node, field, "must be a positive integer");
  return static_cast<int>(*v);
}

}  // namespace

long long parse_duration_ms(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("'" + text + "' is not a duration (e.g. 250ms, 10s, 5m, 2h)");
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit == "ms") scale = 1;
  else if (unit == "s") scale = 1000;
  else if (unit == "m") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else throw std::invalid_argument("'" + text + "': unit must be ms, s, m or h");
  if (value < 0) throw std::invalid_argument("'" + text + "': a duration cannot be negative");
  // Also rejects inf and nan, which stod accepts; the cast below is only defined for finite values in range.
  if (!(value * scale <= 1e15)) throw std::invalid_argument("'" + text + "': a duration must be finite and under 30000 years");
  return static_cast<long long>(value * scale + 0.5);
}

std::string expand_placeholders(const std::string& text, long long app, int job,
                                const std::map<std::string, std::string>& hparams) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '{') {
      const auto close = text.find('}', i);
      if (close != std::string::npos) {
        const std::string name = text.substr(i + 1, close - i - 1);
        if (name == "app" && app >= 0) {
          out += std::to_string(app);
          i = close + 1;
          continue;
        }
        if (name == "job") {
          out += std::to_string(job);
          i = close + 1;
          continue;
        }
        if (const auto it = hparams.find(name); it != hparams.end()) {
          out += it->second;
          i = close + 1;
          continue;
        }
      }
    }
    out += text[i++];
  }
  return out;
}

AppSpec parse_app_spec(const std::string& text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& s = e.source();
    throw std::invalid_argument(source + ":" + std::to_string(s.begin.line) + ":" + std::to_string(s.begin.column) +
                                ": " + std::string(e.description()));
  }
  check_keys(source, root, "",
             {"name", "command", "workdir", "env", "hyperparameters", "resources", "max_concurrent_jobs", "checkpoint",
              "scheduler"});
  AppSpec spec;
  const auto* name = root.get("name");
  if (!name || !name->is_string()) throw std::invalid_argument(source + ": name: required (a string)");
  spec.name = *name->value<std::string>();
  if (spec.name.empty() || spec.name.size() > 64) bad(source, *name, "name", "must be 1 to 64 characters");

  const auto* command = root.get("command");
  if (!command || !command->is_array() || command->as_array()->empty()) {
    throw std::invalid_argument(source + ": command: required (a non-empty array of strings)");
  }
  for (const auto& part : *command->as_array()) {
    if (!part.is_string()) bad(source, part, "command", "every element must be a string");
    spec.command.push_back(*part.value<std::string>());
  }
  if (const auto* workdir = root.get("workdir")) {
    if (!workdir->is_string()) bad(source, *workdir, "workdir", "must be a string");
    spec.workdir = *workdir->value<std::string>();
  }
  if (const auto* env = root.get("env")) {
    if (!env->is_table()) bad(source, *env, "env", "must be a table of strings");
    for (const auto& [key, value] : *env->as_table()) {
      spec.env[std::string(key.str())] = scalar_text(source, value, "env." + std::string(key.str()));
    }
  }
  if (const auto* hp = root.get("hyperparameters")) {
    if (!hp->is_table()) bad(source, *hp, "hyperparameters", "must be a table of arrays");
    for (const auto& [key, values] : *hp->as_table()) {
      const std::string field = "hyperparameters." + std::string(key.str());
      if (!values.is_array() || values.as_array()->empty()) bad(source, values, field, "must be a non-empty array");
      auto& list = spec.hyperparameters[std::string(key.str())];
      auto& literals = spec.hyperparameter_literals[std::string(key.str())];
      for (const auto& v : *values.as_array()) {
        list.push_back(scalar_text(source, v, field));
        literals.push_back(json_literal(v));
      }
    }
  }
  if (const auto* res = root.get("resources")) {
    if (!res->is_table()) bad(source, *res, "resources", "must be a table");
    check_keys(source, *res->as_table(), "resources.", {"gpus_per_job"});
    if (const auto* g = res->as_table()->get("gpus_per_job")) spec.gpus_per_job = positive_int(source, *g, "resources.gpus_per_job");
  }
  if (const auto* m = root.get("max_concurrent_jobs")) spec.max_concurrent_jobs = positive_int(source, *m, "max_concurrent_jobs");
  if (const auto* ck = root.get("checkpoint")) {
    if (!ck->is_table()) bad(source, *ck, "checkpoint", "must be a table");
    check_keys(source, *ck->as_table(), "checkpoint.", {"dir", "grace_period"});
    if (const auto* dir = ck->as_table()->get("dir")) {
      if (!dir->is_string()) bad(source, *dir, "checkpoint.dir", "must be a string");
      spec.checkpoint_dir = *dir->value<std::string>();
    }
    if (const auto* grace = ck->as_table()->get("grace_period")) {
      if (!grace->is_string()) bad(source, *grace, "checkpoint.grace_period", "must be a duration string like \"60s\"");
      long long ms = 0;
      try {
        ms = parse_duration_ms(*grace->value<std::string>());
      } catch (const std::invalid_argument& e) {
        bad(source, *grace, "checkpoint.grace_period", e.what());
      }
      if (ms > 24 * 3'600'000) bad(source, *grace, "checkpoint.grace_period", "must be at most 24h");
      spec.grace_period_ms = static_cast<int>(ms);
    }
  }
  // Cartesian product, hyper-parameters in name order, the last one varying fastest.
  std::vector<std::map<std::string, std::string>> combos{{}};
  for (const auto& [key, values] : spec.hyperparameters) {
    // Checked before the product is built: two long lists would otherwise exhaust memory first.
    if (combos.size() * values.size() > 10'000) throw std::invalid_argument(source + ": hyperparameters: more than 10000 jobs");
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& combo : combos) {
      for (const auto& v : values) {
        auto c = combo;
        c[key] = v;
        next.push_back(std::move(c));
      }
    }
    combos = std::move(next);
  }
  for (std::size_t i = 0; i < combos.size(); ++i) {
    JobSpec job;
    job.index = static_cast<int>(i);
    job.hparams = combos[i];
    // Job i's value of each hyper-parameter: the product's digits, the last name varying fastest.
    nlohmann::json typed = nlohmann::json::object();
    std::size_t rest = i;
    for (auto it = spec.hyperparameter_literals.rbegin(); it != spec.hyperparameter_literals.rend(); ++it) {
      typed[it->first] = nlohmann::json::parse(it->second[rest % it->second.size()]);
      rest /= it->second.size();
    }
    job.hparams_json = typed.dump();
    for (const auto& part : spec.command) job.command.push_back(expand_placeholders(part, -1, job.index, job.hparams));
    spec.jobs.push_back(std::move(job));
  }
  if (spec.max_concurrent_jobs == 0) spec.max_concurrent_jobs = static_cast<int>(spec.jobs.size());
  // [scheduler] is read by the app's launcher (docs/launcher.md) and stored verbatim; it is checked here with
  // the launcher's own code so that a table the launcher would refuse is refused at submit.
  (void)scheduler_table_of(root, source, static_cast<int>(spec.jobs.size()));
  return spec;
}

}  // namespace themis::spec
