#pragma once
// themisctl's table output: one row per JSON item, columns upper-cased, "-" for null or missing.
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace themis::ctl {

std::string cell(const nlohmann::json& value);
void print_table(std::ostream& out, const nlohmann::json& items, const std::vector<std::string>& columns);

}  // namespace themis::ctl
