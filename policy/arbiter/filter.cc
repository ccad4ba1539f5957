#include "policy/arbiter/filter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace themis::arbiter {

namespace {
constexpr std::int64_t kMaxDenominator = 1'000'000'000;
constexpr std::int64_t kDecimalDenominator = 1'000'000;  // 10^kMaxFilterDecimals

double rank_key(const AppModel* app) {
  const double rho = app->current_rho();
  return std::isnan(rho) ? std::numeric_limits<double>::infinity() : rho;
}
}  // namespace

FilterFraction::FilterFraction(std::int64_t numerator, std::int64_t denominator)
    : numerator_(numerator), denominator_(denominator) {
  if (denominator <= 0 || denominator > kMaxDenominator)
    throw std::invalid_argument("filter fraction f: denominator must be in 1..10^9, got " +
                                std::to_string(denominator));
  if (numerator < 0 || numerator > denominator)
    throw std::invalid_argument("filter fraction f: must be in [0, 1], got " + std::to_string(numerator) +
                                "/" + std::to_string(denominator));
}

FilterFraction FilterFraction::parse(std::string_view text) {
  const std::string shown(text);
  auto fail = [&](const std::string& why) {
    return std::invalid_argument("filter fraction f = '" + shown + "': " + why);
  };
  if (text.empty()) throw fail("empty");
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  if (whole.empty() && fraction.empty()) throw fail("no digits");
  if (whole.size() > 1) throw fail("must be a decimal in [0, 1]");
  if (fraction.size() > static_cast<std::size_t>(kMaxFilterDecimals))
    throw fail("at most " + std::to_string(kMaxFilterDecimals) + " digits after the point");
  std::int64_t numerator = 0;
  for (char ch : whole) {
    if (ch < '0' || ch > '9') throw fail("not a decimal number");
    numerator = ch - '0';
  }
  std::int64_t scale = kDecimalDenominator;
  numerator *= scale;
  for (char ch : fraction) {
    if (ch < '0' || ch > '9') throw fail("not a decimal number");
    scale /= 10;
    numerator += (ch - '0') * scale;
  }
  if (numerator > kDecimalDenominator) throw fail("must be in [0, 1]");
  return FilterFraction(numerator, kDecimalDenominator);
}

FilterFraction FilterFraction::from_double(double f) {
  if (!std::isfinite(f) || f < 0 || f > 1)
    throw std::invalid_argument("filter fraction f = " + std::to_string(f) + ": must be in [0, 1]");
  return FilterFraction(std::llround(f * static_cast<double>(kDecimalDenominator)), kDecimalDenominator);
}

std::string FilterFraction::to_string() const {
  return std::to_string(numerator_) + "/" + std::to_string(denominator_);
}

int filter_count(int active_apps, const FilterFraction& f) {
  if (active_apps <= 0) return 0;
  // ⌈(d − n)·N / d⌉ with integers: (a + d − 1) / d for a >= 0. Fits: d <= 1e9, N < 2^31.
  const std::int64_t d = f.denominator();
  const std::int64_t a = (d - f.numerator()) * active_apps;
  const auto count = static_cast<int>((a + d - 1) / d);
  return std::max(count, 1);
}

std::vector<AppModel*> filter_apps(std::span<AppModel* const> apps, const FilterFraction& f) {
  std::vector<AppModel*> candidates;
  for (AppModel* app : apps)
    if (app->extra_demand() > 0) candidates.push_back(app);
  std::stable_sort(candidates.begin(), candidates.end(), [](const AppModel* a, const AppModel* b) {
    const double ra = rank_key(a);
    const double rb = rank_key(b);
    if (ra != rb) return ra > rb;
    return a->id() < b->id();
  });
  const auto count = static_cast<std::size_t>(filter_count(static_cast<int>(apps.size()), f));
  if (candidates.size() > count) candidates.resize(count);
  return candidates;
}

std::string_view to_string(FilterRule rule) {
  switch (rule) {
    case FilterRule::kFixed: return "fixed";
    case FilterRule::kOfferBounded: return "offer-bounded";
    case FilterRule::kAdaptive: return "adaptive";
  }
  return "?";
}

std::optional<FilterRule> parse_filter_rule(std::string_view text) {
  if (text == "fixed") return FilterRule::kFixed;
  if (text == "offer-bounded") return FilterRule::kOfferBounded;
  if (text == "adaptive") return FilterRule::kAdaptive;
  return std::nullopt;
}

namespace {
// The shortest prefix, at least one app, whose extra demand covers `offered_gpus`.
std::size_t covering_prefix(const std::vector<AppModel*>& ranked, int offered_gpus) {
  std::int64_t demand = 0;
  std::size_t count = 0;
  while (count < ranked.size() && (count == 0 || demand < offered_gpus))
    demand += ranked[count++]->extra_demand();
  return count;
}
}  // namespace

std::vector<AppModel*> filter_apps(std::span<AppModel* const> apps, const FilterFraction& f, FilterRule rule,
                                   int offered_gpus) {
  std::vector<AppModel*> picked = filter_apps(apps, f);
  if (rule == FilterRule::kFixed || picked.empty()) return picked;
  if (rule == FilterRule::kAdaptive) {
    const double worst = rank_key(picked.front());
    const double best = rank_key(picked.back());
    if (std::isfinite(worst) && worst <= best * (1 + kAdaptiveEvenSpread)) return picked;
  }
  picked.resize(covering_prefix(picked, offered_gpus));
  return picked;
}

}  // namespace themis::arbiter
