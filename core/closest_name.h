#pragma once
// "Did you mean": the known name closest to a misspelt one, for error messages about configuration keys,
// sections and policy names.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace themis {

// The candidate within a small edit distance of `name` (a third of its length, at least 1, at most 3; an
// insertion, deletion, substitution or swap of neighbours counts 1), the nearest first; nullopt if none is.
std::optional<std::string> closest_name(std::string_view name, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "", to append to an error message.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace themis
