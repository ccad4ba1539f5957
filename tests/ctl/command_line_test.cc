#include "ctl/command_line.h"

#include <gtest/gtest.h>

namespace themis::ctl {
namespace {

using Args = std::vector<std::string>;

TEST(GlobalFlags, OutputIsTakenBeforeOrAfterTheSubcommand) {
  EXPECT_EQ(take_global_flags({"themisctl", "apps", "-o", "json"}).output, OutputFormat::kJson);
  EXPECT_EQ(take_global_flags({"themisctl", "-o", "wide", "apps"}).output, OutputFormat::kWide);
  EXPECT_EQ(take_global_flags({"themisctl", "apps", "-ojson"}).output, OutputFormat::kJson);
  EXPECT_EQ(take_global_flags({"themisctl", "apps", "--output=wide"}).output, OutputFormat::kWide);
  EXPECT_EQ(take_global_flags({"themisctl", "apps", "--output", "json"}).output, OutputFormat::kJson);
  const auto f = take_global_flags({"themisctl", "apps", "--json", "--user", "alice"});
  EXPECT_EQ(f.output, OutputFormat::kJson);
  EXPECT_EQ(f.rest, (Args{"themisctl", "apps", "--user", "alice"}));
  EXPECT_EQ(take_global_flags({"themisctl", "apps"}).output, OutputFormat::kTable);
}

TEST(GlobalFlags, BadOutputFormatNamesTheValue) {
  try {
    take_global_flags({"themisctl", "apps", "-o", "yaml"});
    FAIL() << "accepted -o yaml";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'yaml'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(take_global_flags({"themisctl", "apps", "-o"}), std::invalid_argument);
}

TEST(GlobalFlags, WatchTakesAnOptionalInterval) {
  auto f = take_global_flags({"themisctl", "apps", "--watch"});
  ASSERT_TRUE(f.watch_seconds);
  EXPECT_EQ(*f.watch_seconds, kDefaultWatchSeconds);
  f = take_global_flags({"themisctl", "-w", "0.5", "leases"});
  ASSERT_TRUE(f.watch_seconds);
  EXPECT_EQ(*f.watch_seconds, 0.5);
  EXPECT_EQ(f.rest, (Args{"themisctl", "leases"}));
  // A following word that is not a number is the next argument, not the interval.
  f = take_global_flags({"themisctl", "--watch", "apps", "--user", "bob"});
  EXPECT_EQ(*f.watch_seconds, kDefaultWatchSeconds);
  EXPECT_EQ(f.rest, (Args{"themisctl", "apps", "--user", "bob"}));
  EXPECT_EQ(*take_global_flags({"themisctl", "rounds", "--watch=5"}).watch_seconds, 5);
  EXPECT_THROW(take_global_flags({"themisctl", "apps", "--watch", "0"}), std::invalid_argument);
  EXPECT_THROW(take_global_flags({"themisctl", "apps", "--watch=soon"}), std::invalid_argument);
  EXPECT_FALSE(take_global_flags({"themisctl", "apps"}).watch_seconds);
}

TEST(GlobalFlags, NothingAfterDoubleDashIsTaken) {
  const auto f = take_global_flags({"themisctl", "sql", "--db", "x.db", "--", "-o"});
  EXPECT_EQ(f.output, OutputFormat::kTable);
  EXPECT_EQ(f.rest, (Args{"themisctl", "sql", "--db", "x.db", "--", "-o"}));
}

}  // namespace
}  // namespace themis::ctl

namespace themis::ctl {
namespace {

TEST(JobName, AppAloneOrWithItsJob) {
  EXPECT_EQ(parse_job_name("12").app, 12);
  EXPECT_EQ(parse_job_name("12").job, 0);
  EXPECT_EQ(parse_job_name("12/3").job, 3);
  EXPECT_EQ(parse_job_name("12_3").app, 12);
  EXPECT_EQ(parse_job_name("12_3").job, 3);
  for (const std::string bad : {"", "x", "12/", "/3", "12/3/4", "-1", "12/x"}) {
    EXPECT_THROW(parse_job_name(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace themis::ctl
