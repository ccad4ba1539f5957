#include "ctl/list_filter.h"

#include <gtest/gtest.h>

namespace themis::ctl {
namespace {

using nlohmann::json;

constexpr double kNow = 1'764'100'000;  // 2025-11-25T19:46:40Z

TEST(ParseTime, CalendarFormsAreUtc) {
  EXPECT_EQ(parse_time("2025-11-25", kNow, "--since"), 1'764'028'800);
  EXPECT_EQ(parse_time("2025-11-25T19:46:40Z", kNow, "--since"), kNow);
  EXPECT_EQ(parse_time("2025-11-25T19:46:40", kNow, "--since"), kNow);
  EXPECT_EQ(parse_time("2025-11-25 19:46", kNow, "--since"), kNow - 40);
}

TEST(ParseTime, TimesAgo) {
  EXPECT_EQ(parse_time("90s", kNow, "--since"), kNow - 90);
  EXPECT_EQ(parse_time("30m", kNow, "--since"), kNow - 1800);
  EXPECT_EQ(parse_time("2h", kNow, "--since"), kNow - 7200);
  EXPECT_EQ(parse_time("7d", kNow, "--since"), kNow - 7 * 86400);
}

TEST(ParseTime, BadTextNamesFlagAndText) {
  for (const std::string bad : {"yesterday", "2h30", "-2h", "2025-13-01", "2025-11-25T25:00", "h", ""}) {
    try {
      parse_time(bad, kNow, "--until");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--until: '" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseStates, CaseInsensitiveCommaSeparatedAndChecked) {
  const std::vector<std::string> known{"PENDING", "RUNNING", "QUEUED"};
  EXPECT_EQ(parse_states("pending,Running", known), (std::vector<std::string>{"PENDING", "RUNNING"}));
  EXPECT_THROW(parse_states("pending,sleeping", known), std::invalid_argument);
}

TEST(FilterItems, UserStateAndPeriod) {
  const json items = json::parse(R"([
    {"app": 1, "owner": "alice", "state": "RUNNING", "submitted": "2025-11-25T10:00:00Z"},
    {"app": 2, "owner": "bob", "state": "PENDING", "submitted": "2025-11-25T11:00:00Z"},
    {"app": 3, "owner": "alice", "state": "QUEUED", "submitted": "2025-11-25T12:00:00Z"}])");
  auto apps = [&](const json& kept) {
    std::vector<int> ids;
    for (const auto& i : kept) ids.push_back(i["app"].get<int>());
    return ids;
  };
  ListFilter f;
  EXPECT_EQ(apps(filter_items(items, f, "submitted")), (std::vector<int>{1, 2, 3}));
  f.user = "alice";
  EXPECT_EQ(apps(filter_items(items, f, "submitted")), (std::vector<int>{1, 3}));
  f.states = {"QUEUED", "PENDING"};
  EXPECT_EQ(apps(filter_items(items, f, "submitted")), (std::vector<int>{3}));
  ListFilter period;
  period.since = parse_time("2025-11-25T11:00:00Z", kNow, "--since");
  EXPECT_EQ(apps(filter_items(items, period, "submitted")), (std::vector<int>{2, 3}));
  period.until = parse_time("2025-11-25T12:00:00Z", kNow, "--until");
  EXPECT_EQ(apps(filter_items(items, period, "submitted")), (std::vector<int>{2}));
}

}  // namespace
}  // namespace themis::ctl
