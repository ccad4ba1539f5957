#include "launcher/launch_spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <toml++/toml.h>

namespace themis::launcher {
namespace {

std::string error_of(const std::string& text, int jobs) {
  try {
    parse_launch_spec(text, "sweep.toml", jobs);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(LaunchSpec, ReadsTheSchedulerTable) {
  const auto spec = parse_launch_spec(
      "name = \"x\"\n[scheduler]\nkind = \"successive-halving\"\nphase_iterations = [20, 20, 40]\n"
      "serial_iter_time = 0.05\nmax_restarts = 1\n",
      "sweep.toml", 4);
  EXPECT_EQ(spec.scheduler.kind, SchedulerKind::kSuccessiveHalving);
  EXPECT_EQ(spec.scheduler.jobs, 4);
  EXPECT_EQ(spec.scheduler.phase_iterations, (std::vector<double>{20, 20, 40}));
  EXPECT_DOUBLE_EQ(spec.serial_iter_time, 0.05);
  EXPECT_EQ(spec.max_restarts, 1);
  const auto plain = parse_launch_spec("[scheduler]\niterations = 300\n", "a.toml", 1);
  EXPECT_EQ(plain.scheduler.kind, SchedulerKind::kAllJobs);
  EXPECT_EQ(plain.scheduler.phase_iterations, (std::vector<double>{300}));
  // [scheduler.slowdown] replaces the priors it names; the others stay the bidder's.
  EXPECT_DOUBLE_EQ(plain.slowdown_priors.same_rack, bidder::SlowdownPriors{}.same_rack);
  const auto sensitive = parse_launch_spec("[scheduler.slowdown]\nsame_rack = 3\ncross_rack = 5\n", "a.toml", 1);
  EXPECT_DOUBLE_EQ(sensitive.slowdown_priors.same_slot, 1.0);
  EXPECT_DOUBLE_EQ(sensitive.slowdown_priors.same_machine, 1.0);
  EXPECT_DOUBLE_EQ(sensitive.slowdown_priors.same_rack, 3.0);
  EXPECT_DOUBLE_EQ(sensitive.slowdown_priors.cross_rack, 5.0);
}

TEST(LaunchSpec, ErrorsNameTheFileLineAndField) {
  EXPECT_EQ(error_of("[scheduler]\nkind = \"hyperband\"\n", 1),
            "sweep.toml:2:8: scheduler.kind: must be \"all-jobs\" or \"successive-halving\", got \"hyperband\"");
  EXPECT_EQ(error_of("[scheduler]\nkind = \"successive-halving\"\nphase_iterations = [10, -1]\n", 4),
            "sweep.toml:3:25: scheduler.phase_iterations: must be a number >= 1, got -1");
  EXPECT_NE(error_of("[scheduler]\nkind = \"successive-halving\"\nphase_iterations = [10, 10]\n", 3)
                .find("jobs must be a power of two, got 3"),
            std::string::npos);
  EXPECT_NE(error_of("[scheduler]\niteratons = 5\n", 1).find("scheduler.iteratons: unknown key"), std::string::npos);
  EXPECT_NE(error_of("[scheduler]\nkind = \"successive-halving\"\n", 2).find("phase_iterations: required"),
            std::string::npos);
}

TEST(LaunchSpec, SaysWhoStartsTheLauncher) {
  EXPECT_TRUE(parse_launch_spec("[scheduler]\niterations = 10\n", "a.toml", 1).started_by_coordinator);
  EXPECT_TRUE(parse_launch_spec("[scheduler]\nlauncher = \"coordinator\"\n", "a.toml", 1).started_by_coordinator);
  EXPECT_FALSE(parse_launch_spec("[scheduler]\nlauncher = \"foreground\"\n", "a.toml", 1).started_by_coordinator);
  EXPECT_EQ(error_of("[scheduler]\nlauncher = \"cron\"\n", 1),
            "sweep.toml:2:12: scheduler.launcher: must be \"coordinator\" or \"foreground\"");
}

TEST(LaunchSpec, HyperparametersAreTypedForTheWorker) {
  const auto json = nlohmann::json::parse(
      hparams_json({{"lr", "0.05"}, {"batch_size", "32"}, {"model", "mlp"}, {"nesterov", "true"}}, 120));
  EXPECT_DOUBLE_EQ(json["lr"].get<double>(), 0.05);
  EXPECT_EQ(json["batch_size"].get<long long>(), 32);
  EXPECT_EQ(json["model"].get<std::string>(), "mlp");
  EXPECT_TRUE(json["nesterov"].get<bool>());
  EXPECT_EQ(json["iterations"].get<long long>(), 120);
}

}  // namespace
}  // namespace themis::launcher

namespace themis::launcher {
namespace {

// Every shipped example app's [scheduler] table is valid for its number of jobs.
TEST(LaunchSpec, ShippedExampleAppsParse) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(THEMIS_SOURCE_DIR) + "/examples/apps")) {
    if (entry.path().extension() != ".toml") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const auto root = toml::parse(text.str(), entry.path().string());
    int jobs = 1;
    if (const auto* hp = root["hyperparameters"].as_table()) {
      for (const auto& [key, values] : *hp) jobs *= static_cast<int>(values.as_array()->size());
    }
    EXPECT_NO_THROW(parse_launch_spec(text.str(), entry.path().string(), jobs)) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

}  // namespace
}  // namespace themis::launcher
