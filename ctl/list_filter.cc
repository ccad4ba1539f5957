#include "ctl/list_filter.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <regex>
#include <stdexcept>

namespace themis::ctl {

namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::optional<double> calendar(const std::string& text) {
  // A date; or a date and hh:mm[:ss], optionally ending in Z. Always UTC.
  static const std::regex form(R"(^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?Z?)?$)");
  std::smatch m;
  if (!std::regex_match(text, m, form)) return std::nullopt;
  auto field = [&](int i) { return m[i].matched ? std::stoi(m[i].str()) : 0; };
  const int y = field(1), mo = field(2), d = field(3), h = field(4), mi = field(5), s = field(6);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || y < 1970) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<double>(timegm(&tm));
}

}  // namespace

std::optional<double> iso_seconds(const std::string& text) { return calendar(text); }

double parse_time(const std::string& text, double now, const std::string& flag) {
  if (auto t = calendar(text)) return *t;
  if (text.size() >= 2) {
    const char unit = text.back();
    const std::string number = text.substr(0, text.size() - 1);
    const bool digits = !number.empty() && std::all_of(number.begin(), number.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    const double scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : unit == 'd' ? 86400 : 0;
    if (digits && scale > 0 && number.size() <= 9) return now - std::stod(number) * scale;
  }
  throw std::invalid_argument(flag + ": '" + text +
                              "' is not a time; give a UTC date or time (2026-11-25, 2026-11-25T19:00:00Z) or a time ago "
                              "(90s, 30m, 2h, 7d)");
}

std::vector<std::string> parse_states(const std::string& text, const std::vector<std::string>& known) {
  std::vector<std::string> states;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string part = upper(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!part.empty()) {
      if (std::find(known.begin(), known.end(), part) == known.end()) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        throw std::invalid_argument("--state: '" + part + "' is not a state here; one of " + list);
      }
      states.push_back(part);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return states;
}

nlohmann::json filter_items(const nlohmann::json& items, const ListFilter& filter, const std::string& time_field) {
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& item : items) {
    if (!filter.user.empty() && item.contains("owner") && item["owner"] != filter.user) continue;
    if (!filter.states.empty() && item.contains("state") && item["state"].is_string() &&
        std::find(filter.states.begin(), filter.states.end(), upper(item["state"].get<std::string>())) == filter.states.end()) {
      continue;
    }
    if (filter.since || filter.until) {
      const auto& t = item.value(time_field, nlohmann::json());
      const auto at = t.is_string() ? iso_seconds(t.get<std::string>()) : std::nullopt;
      if (!at) continue;
      if (filter.since && *at < *filter.since) continue;
      if (filter.until && *at >= *filter.until) continue;
    }
    kept.push_back(item);
  }
  return kept;
}

}  // namespace themis::ctl
