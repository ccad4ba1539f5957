#include "ctl/table.h"

#include <algorithm>
#include <cctype>
#include <ostream>
#include <sstream>

namespace themis::ctl {

std::string cell(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_number_float()) {
    std::ostringstream out;
    out.precision(3);
    out << std::fixed << v.get<double>();
    return out.str();
  }
  return v.dump();
}

void print_table(std::ostream& out, const nlohmann::json& items, const std::vector<std::string>& columns) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> width;
  std::vector<std::string> header;
  for (const auto& c : columns) {
    std::string h = c;
    for (auto& ch : h) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    header.push_back(h);
    width.push_back(h.size());
  }
  for (const auto& item : items) {
    std::vector<std::string> row;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      row.push_back(item.contains(columns[i]) ? cell(item[columns[i]]) : "-");
      width[i] = std::max(width[i], row.back().size());
    }
    rows.push_back(row);
  }
  auto print = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size()) out << std::string(width[i] - row[i].size() + 2, ' ');
    }
    out << "\n";
  };
  print(header);
  for (const auto& row : rows) print(row);
}

}  // namespace themis::ctl
