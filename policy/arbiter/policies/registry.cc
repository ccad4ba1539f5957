#include "policy/arbiter/policies/registry.h"

#include <stdexcept>

#include "policy/arbiter/themis_policy.h"

namespace themis::arbiter::policies {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<Policy> (*make)(const PolicySettings&);
};

template <std::unique_ptr<Policy> (*Make)()>
std::unique_ptr<Policy> plain(const PolicySettings&) {
  return Make();
}

std::unique_ptr<Policy> tiresias(const PolicySettings& s) { return make_tiresias(s.tiresias); }

constexpr Entry kBaselines[] = {
    {"gandiva", plain<make_gandiva>}, {"tiresias", tiresias},       {"optimus", plain<make_optimus>},
    {"slaq", plain<make_slaq>},       {"srtf", plain<make_srtf>},   {"srsf", plain<make_srsf>},
    {"max-min", plain<make_max_min>}, {"fifo", plain<make_fifo>}, {"gavel-ftf", plain<make_gavel_ftf>},
};

}  // namespace

std::vector<std::string> policy_names() {
  std::vector<std::string> names{"themis"};
  for (const Entry& e : kBaselines) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<Policy> make_policy(std::string_view name, const PolicySettings& settings) {
  if (name == "themis") {
    ThemisSettings themis;
    themis.f = FilterFraction::from_double(settings.filter_f);
    const auto filter = parse_filter_rule(settings.filter);
    if (!filter) throw std::invalid_argument("unknown filter rule '" + settings.filter + "' (" + std::string(kFilterRuleNames) + ")");
    themis.filter_rule = *filter;
    const auto rounding = parse_rounding_rule(settings.rounding);
    if (!rounding) throw std::invalid_argument("unknown rounding rule '" + settings.rounding + "' (nearest, lottery, time-share)");
    themis.rounding = *rounding;
    const auto solver = parse_solver_kind(settings.solver);
    if (!solver) throw std::invalid_argument("unknown solver '" + settings.solver + "' (" + std::string(kSolverNames) + ")");
    themis.solver = *solver;
    themis.solver_max_nodes = settings.solver_max_nodes;
    themis.solver_threads = settings.solver_threads;
    if (settings.small_search_nodes) themis.small_search_nodes = *settings.small_search_nodes;
    themis.shape_bids = settings.shape_bids;
    themis.solver_seconds = settings.solver_seconds;
    themis.lease_duration = settings.lease;
    themis.gang_reservation = settings.gang_reservation;
    themis.gang_backfill = settings.gang_backfill;
    return std::make_unique<ThemisPolicy>(themis);
  }
  for (const Entry& e : kBaselines)
    if (name == e.name) return e.make(settings);
  std::string known;
  for (const std::string& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown policy '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace themis::arbiter::policies
