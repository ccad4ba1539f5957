#include "coordinator/config.h"

#include <algorithm>

#include <cctype>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <toml++/toml.h>

#include "core/closest_name.h"
#include "net/themis_toml.h"
#include "policy/arbiter/winner_solver.h"
#include "web/listen_address.h"
#include "policy/arbiter/filter.h"
#include "policy/arbiter/whole_gpus.h"
#include "policy/arbiter/policies/registry.h"
#include "spec/app_spec.h"
#include "core/toml_integer.h"

namespace themis::coordinator {

namespace {
std::string at(const std::string& path, const toml::node& n) { return net::toml_position(path, n.source()); }

// Why a baseline cannot run in the coordinator: it needs what only the app knows and its launcher does not
// report (planner::RecordedAppModel answers ρ, demand, bids, placement slowdowns and leased GPU-seconds).
std::optional<std::string> simulator_only_policy(const std::string& policy) {
  if (policy == "srtf" || policy == "optimus") return "needs each app's remaining time on any GPU count, which apps do not report";
  if (policy == "srsf") return "needs each app's remaining GPU-seconds of work, which apps do not report";
  if (policy == "slaq") return "needs each app's loss curve, which apps do not report";
  if (policy == "gavel-ftf") return "needs each app's finish-time terms (elapsed, remaining and isolated time), which apps do not report";
  return std::nullopt;
}

// The [coordinator] keys, for the suggestion and the list in an unknown-key error. The second group is
// reserved for later versions (docs/admin.md) and accepted, unused, so one themis.toml serves every version.
const std::vector<std::string>& coordinator_keys() {
  static const std::vector<std::string> keys{
      "listen", "database", "authorized_keys", "secret_key", "policy", "heartbeat_interval", "lease_duration",
      "round_batch_window", "auction_budget", "probe_duration", "slow_loop_threshold", "insecure", "heartbeat_lives",
      "seed", "rendezvous_ports", "filter", "gang_reservation", "gang_backfill", "contention_ahead", "rounding", "solver", "solver_threads", "fairness_knob", "round_records_kept", "reject_infeasible", "http_listen",
      "admin_groups", "private_data", "backup_dir", "backup_keep", "notify_smtp", "webhook_allow"};
  return keys;
}

// [retry.<class>] and [admission] (docs/reliability.md).
void load_reliability_tables(const std::string& path, const toml::table& root, CoordinatorConfig& c) {
  if (const auto* retry = root["retry"].as_table()) {
    for (const auto& [name, node] : *retry) {
      const std::string field = "retry." + std::string(name.str());
      const auto failure_class = failure_class_from_string(name.str());
      if (!failure_class) {
        throw std::invalid_argument(at(path, node) + field + ": unknown failure class (user_error, out_of_memory, "
                                    "communication, node_failure, preemption, other)");
      }
      const auto* table = node.as_table();
      if (!table) throw std::invalid_argument(at(path, node) + field + ": must be a table");
      auto& rule = c.retry.classes[*failure_class];
      for (const auto& [key, value] : *table) {
        const std::string k(key.str());
        const std::string f = field + "." + k;
        if (*failure_class == FailureClass::kPreemption) {
          throw std::invalid_argument(at(path, value) + f + ": a preempted job always resumes; nothing to configure");
        }
        if (k == "max_retries") {
          const auto v = toml_integer(value);
          if (!v || *v < -1 || *v > 1000) {
            throw std::invalid_argument(at(path, value) + f + ": must be an integer in -1..1000 (-1: unlimited)");
          }
          rule.max_retries = static_cast<int>(*v);
        } else if (k == "backoff" || k == "backoff_max") {
          const auto text = value.value<std::string>();
          if (!value.is_string() || !text) throw std::invalid_argument(at(path, value) + f + ": must be a duration string");
          try {
            (k == "backoff" ? rule.backoff_s : rule.backoff_max_s) = static_cast<double>(spec::parse_duration_ms(*text)) / 1000.0;
          } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(at(path, value) + f + ": " + e.what());
          }
        } else if (k == "backoff_multiplier") {
          const auto v = value.value<double>();
          if (!v || *v < 1 || *v > 100) throw std::invalid_argument(at(path, value) + f + ": must be a number in [1, 100]");
          rule.backoff_multiplier = *v;
        } else {
          throw std::invalid_argument(at(path, value) + f + ": unknown key (max_retries, backoff, backoff_max, backoff_multiplier)");
        }
      }
    }
  }
  if (const auto* admission = root["admission"].as_table()) {
    for (const auto& [key, value] : *admission) {
      const std::string f = "admission." + std::string(key.str());
      if (key.str() != "max_demand_ratio") throw std::invalid_argument(at(path, value) + f + ": unknown key (max_demand_ratio)");
      const auto v = value.value<double>();
      if (!v || *v < 0 || *v > 1000) {
        throw std::invalid_argument(at(path, value) + f + ": must be a number in [0, 1000] (0: admission control off)");
      }
      c.admission.max_demand_ratio = *v;
    }
  }
}

// POSIX portable user names, as useradd accepts them: what a nodelet can look up with getpwnam.
bool valid_account_name(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  if (!(std::islower(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool last_dollar = c == '$' && i + 1 == name.size();
    if (!(std::islower(c) || std::isdigit(c) || c == '_' || c == '-' || last_dollar)) return false;
  }
  return true;
}

// [users]: principal = "account".
void load_users_table(const std::string& path, const toml::table& root, CoordinatorConfig& c) {
  const auto* node = root.get("users");
  if (!node) return;
  const auto* users = node->as_table();
  if (!users) throw std::invalid_argument(at(path, *node) + "users: must be a table of principal = \"unix account\"");
  for (const auto& [key, value] : *users) {
    const std::string field = "users." + std::string(key.str());
    const auto account = value.value<std::string>();
    if (!value.is_string() || !account) {
      throw std::invalid_argument(at(path, value) + field + ": must be a string, the Unix account the principal's jobs run as");
    }
    if (!valid_account_name(*account)) {
      throw std::invalid_argument(at(path, value) + field + ": '" + *account +
                                  "' is not a Unix user name (lower-case letters, digits, '_' and '-', at most 32)");
    }
    c.users[std::string(key.str())] = *account;
  }
}

}  // namespace

std::string unix_account(const CoordinatorConfig& config, const std::string& principal) {
  const auto it = config.users.find(principal);
  return it == config.users.end() ? principal : it->second;
}

double auction_budget_for_lease(double lease_seconds) { return std::clamp(lease_seconds / 60.0, 0.5, 10.0); }

double auction_budget_seconds(const CoordinatorConfig& config) {
  if (config.auction_budget_ms > 0) return static_cast<double>(config.auction_budget_ms) / 1000.0;
  return auction_budget_for_lease(static_cast<double>(config.lease_duration_ms) / 1000.0);
}

CoordinatorConfig load_coordinator_config(const std::string& path) {
  const toml::table root = net::parse_toml_file(path);
  net::check_themis_toml_layout(path, root);
  CoordinatorConfig c;
  load_reliability_tables(path, root, c);
  load_users_table(path, root, c);
  const auto* table = root["coordinator"].as_table();
  if (!table) return c;
  for (const auto& [key, value] : *table) {
    const auto& node = value;  // a structured binding cannot be captured by the lambdas below in clang < 16
    const std::string k(key.str());
    const std::string field = "coordinator." + k;
    auto str = [&]() {
      if (!node.is_string()) throw std::invalid_argument(at(path, node) + field + ": must be a string");
      return *node.value<std::string>();
    };
    auto duration = [&]() {
      try {
        return spec::parse_duration_ms(str());
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(at(path, node) + field + ": " + e.what());
      }
    };
    if (k == "listen") c.listen = str();
    else if (k == "database") c.database = str();
    else if (k == "authorized_keys") c.authorized_keys = str();
    else if (k == "secret_key") c.secret_key = str();
    else if (k == "policy") {
      c.policy = str();
      const auto known = arbiter::policies::policy_names();
      if (std::find(known.begin(), known.end(), c.policy) == known.end()) {
        std::string list;
        for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
        throw std::invalid_argument(at(path, node) + field + ": unknown policy '" + c.policy + "'" +
                                    did_you_mean(c.policy, known) + "; policies: " + list);
      }
      if (const auto why = simulator_only_policy(c.policy))
        throw std::invalid_argument(at(path, node) + field + ": '" + c.policy + "' " + *why +
                                    "; it runs in themis-sim only (the coordinator runs themis, gandiva, tiresias, max-min, fifo)");
    }
    else if (k == "heartbeat_interval") c.heartbeat_interval_ms = duration();
    else if (k == "lease_duration") c.lease_duration_ms = duration();
    else if (k == "round_batch_window") c.round_batch_window_ms = duration();
    else if (k == "auction_budget") c.auction_budget_ms = duration();
    else if (k == "probe_duration") c.probe_duration_ms = duration();
    else if (k == "slow_loop_threshold") c.slow_loop_threshold_ms = duration();
    else if (k == "insecure") {
      if (!node.is_boolean()) throw std::invalid_argument(at(path, node) + field + ": must be true or false");
      c.insecure = *node.value<bool>();
    } else if (k == "heartbeat_lives") {
      const auto v = toml_integer(node);
      if (!v || *v < 1 || *v > 100) throw std::invalid_argument(at(path, node) + field + ": must be an integer in 1..100");
      c.heartbeat_lives = static_cast<int>(*v);
    } else if (k == "round_records_kept") {
      const auto v = toml_integer(node);
      if (!v || *v < 0) throw std::invalid_argument(at(path, node) + field + ": must be an integer >= 0 (0: keep all)");
      c.round_records_kept = *v;
    } else if (k == "seed") {
      const auto v = toml_integer(node);
      if (!v) throw std::invalid_argument(at(path, node) + field + ": must be an integer");
      c.seed = *v;
    } else if (k == "rendezvous_ports") {
      const auto* range = node.as_array();
      const auto first = range && range->size() == 2 ? toml_integer((*range)[0]) : std::nullopt;
      const auto last = range && range->size() == 2 ? toml_integer((*range)[1]) : std::nullopt;
      if (!first || !last || *first < 1024 || *last > 65535 || *first > *last) {
        throw std::invalid_argument(at(path, node) + field + ": must be [first, last], ports in 1024..65535, first <= last");
      }
      c.rendezvous_port_first = static_cast<int>(*first);
      c.rendezvous_port_last = static_cast<int>(*last);
    } else if (k == "filter") {
      const auto v = node.value<std::string>();
      const auto rule = v ? arbiter::parse_filter_rule(*v) : std::nullopt;
      if (!rule) throw std::invalid_argument(at(path, node) + field + ": must be one of " + std::string(arbiter::kFilterRuleNames));
      c.filter = *rule;
    } else if (k == "gang_reservation") {
      if (!node.is_boolean()) throw std::invalid_argument(at(path, node) + field + ": must be true or false");
      c.gang_reservation = *node.value<bool>();
    } else if (k == "gang_backfill") {
      if (!node.is_boolean()) throw std::invalid_argument(at(path, node) + field + ": must be true or false");
      c.gang_backfill = *node.value<bool>();
    } else if (k == "contention_ahead") {
      if (!node.is_boolean()) throw std::invalid_argument(at(path, node) + field + ": must be true or false");
      c.contention_ahead = *node.value<bool>();
    } else if (k == "rounding") {
      const auto v = node.value<std::string>();
      if (!v || !arbiter::parse_rounding_rule(*v))
        throw std::invalid_argument(at(path, node) + field + ": must be one of nearest, lottery, time-share");
      c.rounding = *v;
    } else if (k == "solver") {
      const auto v = node.value<std::string>();
      if (!v || !arbiter::parse_solver_kind(*v))
        throw std::invalid_argument(at(path, node) + field + ": must be one of " + std::string(arbiter::kSolverNames));
      c.solver = *v;
    } else if (k == "solver_threads") {
      const auto v = toml_integer(node);
      if (!v || *v < 0 || *v > 64)
        throw std::invalid_argument(at(path, node) + field + ": must be an integer in 0..64 (0: the machine's cores, at most 8)");
      c.solver_threads = static_cast<int>(*v);
    } else if (k == "fairness_knob") {
      const auto v = node.value<double>();
      if (!v || *v < 0 || *v >= 1) throw std::invalid_argument(at(path, node) + field + ": must be a number in [0, 1)");
      c.fairness_knob = *v;
    } else if (k == "reject_infeasible") {
      if (!node.is_boolean()) throw std::invalid_argument(at(path, node) + field + ": must be true or false");
      c.reject_infeasible = *node.value<bool>();
    } else if (k == "http_listen") {
      c.http_listen = str();
      try {
        web::parse_listen_address(c.http_listen, field);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(at(path, node) + e.what());
      }
    } else if (k == "admin_groups" || k == "private_data" ||
               k == "backup_dir" || k == "backup_keep" || k == "notify_smtp" || k == "webhook_allow") {
      // Reserved for later versions; accepted, unused, so one themis.toml serves every version.
    } else {
      net::throw_unknown_key(path, key, "coordinator", coordinator_keys());
    }
  }
  if (c.heartbeat_interval_ms <= 0) throw std::invalid_argument(path + ": coordinator.heartbeat_interval: must be > 0");
  if (c.lease_duration_ms <= 0) throw std::invalid_argument(path + ": coordinator.lease_duration: must be > 0");
  if (const char* creds = std::getenv("CREDENTIALS_DIRECTORY"); creds && !table->contains("secret_key")) {
    c.secret_key = std::string(creds) + "/curve.key_secret";  // systemd LoadCredential=
  }
  return c;
}

}  // namespace themis::coordinator
