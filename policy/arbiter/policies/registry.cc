#include "policy/arbiter/policies/registry.h"

#include <stdexcept>

#include "policy/arbiter/themis_policy.h"

namespace themis::arbiter::policies {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<Policy> (*make)();
};

constexpr Entry kBaselines[] = {
    {"gandiva", make_gandiva}, {"tiresias", make_tiresias}, {"optimus", make_optimus},
    {"slaq", make_slaq},       {"srtf", make_srtf},         {"srsf", make_srsf},
    {"max-min", make_max_min}, {"fifo", make_fifo},
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
    if (!filter) throw std::invalid_argument("unknown filter rule '" + settings.filter + "' (offer-bounded, fixed)");
    themis.filter_rule = *filter;
    const auto rounding = parse_rounding_rule(settings.rounding);
    if (!rounding) throw std::invalid_argument("unknown rounding rule '" + settings.rounding + "' (nearest, lottery, time-share)");
    themis.rounding = *rounding;
    themis.solver_seconds = 0;
    themis.solver_max_nodes = settings.solver_max_nodes;
    themis.solver_seconds = settings.solver_seconds;
    themis.lease_duration = settings.lease;
    return std::make_unique<ThemisPolicy>(themis);
  }
  for (const Entry& e : kBaselines)
    if (name == e.name) return e.make();
  std::string known;
  for (const std::string& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown policy '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace themis::arbiter::policies
