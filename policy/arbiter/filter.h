#pragma once
// Round-by-round filtering (Themis §3.3.2, architecture.md §3): only the ⌈(1−f)·N⌉ apps with the worst
// current ρ see the offer, at least one. Under FilterRule::kOfferBounded that list is cut further to the
// worst apps that can use the whole offer between them (docs/arbiter.md, "A round").
//
// f is an exact rational so that the count has no floating-point error: with f = 0.7 and N = 10,
// (1 − f)·N is exactly 3, not 3.0000000000000004 (which ⌈·⌉ would turn into 4). f is accepted as a
// decimal with at most kMaxFilterDecimals fractional digits ("0.8", "0.75", "1") or as a
// numerator/denominator pair.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policy/arbiter/policy.h"

namespace themis::arbiter {

inline constexpr int kMaxFilterDecimals = 6;

class FilterFraction {
 public:
  // f = numerator / denominator, 0 <= f <= 1, 0 < denominator <= 10^9. Throws std::invalid_argument.
  FilterFraction(std::int64_t numerator, std::int64_t denominator);
  // "0.8", "0.75", "1", "0": a decimal in [0, 1] with at most kMaxFilterDecimals fractional digits.
  // Throws std::invalid_argument naming the text and what is wrong.
  static FilterFraction parse(std::string_view decimal);
  // The nearest decimal with kMaxFilterDecimals digits (0.8 -> 800000/10^6). Throws if outside [0, 1]
  // or not finite.
  static FilterFraction from_double(double f);

  std::int64_t numerator() const { return numerator_; }
  std::int64_t denominator() const { return denominator_; }
  double value() const { return static_cast<double>(numerator_) / static_cast<double>(denominator_); }
  std::string to_string() const;

 private:
  std::int64_t numerator_;
  std::int64_t denominator_;
};

// How many of the ranked apps see the offer.
//   kFixed: the paper's ⌈(1 − f)·N⌉ (Pseudocode 1 line 17).
//   kOfferBounded: of those, only the shortest prefix (worst ρ first) whose extra demand adds up to at
//     least the offered GPUs, at least one app. An app further down could only win GPUs that an app
//     with a worse ρ can use, and every extra bidder raises the others' hidden payments (Themis §3.3.2:
//     the filter exists to shrink contention and payments; Shockwave: a fixed f is not always best).
//     ⌈(1 − f)·N⌉ stays the upper bound, so f keeps its meaning.
//   kAdaptive: chosen each round from the spread of the ranked apps' ρ. When they are within
//     kAdaptiveEvenSpread of each other (ρ_max ≤ 1.1·ρ_min), nobody is much further behind than
//     another: all of them bid, as under kFixed, and the auction packs the offer for efficiency. Otherwise
//     a few apps are behind: only the worst that can use the offer bid, as under kOfferBounded. The
//     effective f of a round is therefore between the two rules'; ⌈(1 − f)·N⌉ stays the upper bound. An
//     unknown ρ (NaN, ranked +∞) counts as spread. docs/arbiter.md, "Adaptive filter", has the rules tried.
enum class FilterRule { kFixed, kOfferBounded, kAdaptive };
std::string_view to_string(FilterRule rule);
std::optional<FilterRule> parse_filter_rule(std::string_view text);  // "fixed" | "offer-bounded" | "adaptive"
inline constexpr std::string_view kFilterRuleNames = "offer-bounded, fixed, adaptive";
inline constexpr double kAdaptiveEvenSpread = 0.10;

// ⌈(1 − f)·n⌉, at least 1 when n > 0; 0 when n == 0. Exact integer arithmetic.
int filter_count(int active_apps, const FilterFraction& f);

// The apps that see the offer, worst current ρ first (ties: lower app id first). N is the number of
// active apps; only apps that can use more GPUs (extra_demand > 0) are ranked, because a satisfied app
// could only bid "nothing" and would waste a place. A NaN ρ ranks as +∞ (unknown counts as at risk).
std::vector<AppModel*> filter_apps(std::span<AppModel* const> apps, const FilterFraction& f);
// The same list under `rule` for an offer of `offered_gpus` GPUs (kFixed ignores it).
std::vector<AppModel*> filter_apps(std::span<AppModel* const> apps, const FilterFraction& f, FilterRule rule,
                                   int offered_gpus);

}  // namespace themis::arbiter
