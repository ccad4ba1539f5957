#pragma once
// The filters of themisctl's list commands (`--user`, `--state`, `--since`, `--until`), applied to the
// coordinator's JSON items. Pure: `now` comes in.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace themis::ctl {

struct ListFilter {
  std::string user;                  // items whose `owner` is this ("" = any)
  std::vector<std::string> states;   // items whose `state` is one of these, case-insensitive (empty = any)
  std::optional<double> since;       // items whose time field is at or after this (unix seconds)
  std::optional<double> until;       // ... and before this
};

// "2026-11-25", "2026-11-25T19:00:00Z", "2026-11-25 19:00" (UTC), or a time ago: "90s", "30m", "2h",
// "7d". Throws std::invalid_argument naming `flag` and the text.
double parse_time(const std::string& text, double now, const std::string& flag);

// "running,pending" -> {"RUNNING", "PENDING"}; throws std::invalid_argument for a state not in `known`.
std::vector<std::string> parse_states(const std::string& text, const std::vector<std::string>& known);

// ISO 8601 UTC as the coordinator writes it ("2026-11-25T19:00:00Z") -> unix seconds; nullopt otherwise.
std::optional<double> iso_seconds(const std::string& text);

// The items that pass; `time_field` names the ISO time the since/until bounds compare (items without it
// fail a bound). Fields that an item lacks do not filter it out for user/state.
nlohmann::json filter_items(const nlohmann::json& items, const ListFilter& filter, const std::string& time_field);

}  // namespace themis::ctl
