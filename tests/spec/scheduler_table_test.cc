// The [scheduler] table is checked at submit (parse_app_spec) by the code the launcher runs
// (parse_scheduler_table): each bad table of issue 14 is refused with its file:line:col and field.
#include <gtest/gtest.h>

#include <string>

#include "spec/app_spec.h"
#include "spec/scheduler_spec.h"

namespace themis::spec {
namespace {

std::string submit_error(const std::string& text) {
  try {
    parse_app_spec(text, "app.toml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

const std::string kHead = "name = \"x\"\ncommand = [\"true\"]\n";
const std::string kThreeJobs = "[hyperparameters]\nlr = [0.1, 0.01, 0.001]\n";

TEST(SchedulerTableAtSubmit, AnUnknownKindIsRefused) {
  EXPECT_EQ(submit_error(kHead + "[scheduler]\nkind = \"hyperband\"\n"),
            "app.toml:4:8: scheduler.kind: must be \"all-jobs\" or \"successive-halving\", got \"hyperband\"");
  EXPECT_EQ(submit_error(kHead + "[scheduler]\nkind = 3\n"),
            "app.toml:4:8: scheduler.kind: must be \"all-jobs\" or \"successive-halving\", got 3");
}

TEST(SchedulerTableAtSubmit, OutOfRangeValuesAreRefused) {
  EXPECT_EQ(submit_error(kHead + "[scheduler]\niterations = -100\n"),
            "app.toml:4:14: scheduler.iterations: must be a number >= 1, got -100");
  EXPECT_EQ(submit_error(kHead + "[scheduler]\niterations = 0.5\n"),
            "app.toml:4:14: scheduler.iterations: must be a number >= 1, got 0.5");
  EXPECT_EQ(submit_error(kHead + "[scheduler]\nmax_restarts = -1\n"),
            "app.toml:4:16: scheduler.max_restarts: must be an integer 0..1000, got -1");
  EXPECT_EQ(submit_error(kHead + "[scheduler]\nserial_iter_time = 0\n"),
            "app.toml:4:20: scheduler.serial_iter_time: must be a positive number of seconds, got 0");
  EXPECT_EQ(submit_error(kHead + "[hyperparameters]\nlr = [1, 2]\n[scheduler]\nkind = \"successive-halving\"\n"
                                 "phase_iterations = [10, -1]\n"),
            "app.toml:7:25: scheduler.phase_iterations: must be a number >= 1, got -1");
  EXPECT_EQ(submit_error(kHead + "[hyperparameters]\nlr = [1, 2]\n[scheduler]\nkind = \"successive-halving\"\n"
                                 "phase_iterations = [10, 10, 10]\n"),
            "app.toml:7:20: scheduler.phase_iterations: has 3 phases; 2 jobs allow at most 2");
}

TEST(SchedulerTableAtSubmit, WrongTypesAreRefused) {
  EXPECT_EQ(submit_error(kHead + "[scheduler]\niterations = \"100\"\n"),
            "app.toml:4:14: scheduler.iterations: must be a number >= 1, got \"100\"");
  EXPECT_EQ(submit_error(kHead + "[scheduler]\nlauncher = true\n"),
            "app.toml:4:12: scheduler.launcher: must be \"coordinator\" or \"foreground\"");
  EXPECT_EQ(submit_error(kHead + "scheduler = 5\n"), "app.toml:3:13: scheduler: must be a table, got 5");
}

TEST(SchedulerTableAtSubmit, AMisspelledKeyIsRefusedWhereItIsWritten) {
  EXPECT_EQ(submit_error(kHead + "[scheduler]\niteratons = 5\n"),
            "app.toml:4:1: scheduler.iteratons: unknown key (known: iterations, kind, launcher, max_restarts, "
            "phase_iterations, serial_iter_time, slowdown)");
}

TEST(SchedulerTableAtSubmit, APlacementSlowdownBelowOneOrOfAnUnknownLevelIsRefused) {
  EXPECT_EQ(submit_error(kHead + "[scheduler.slowdown]\nsame_rack = 0.5\n"),
            "app.toml:4:13: scheduler.slowdown.same_rack: must be a number >= 1 (how many times slower; 1: no "
            "slowdown), got 0.5");
  EXPECT_EQ(submit_error(kHead + "[scheduler.slowdown]\ncross_machine = 2\n"),
            "app.toml:4:1: scheduler.slowdown.cross_machine: unknown key (known: same_slot, same_machine, same_rack, "
            "cross_rack)");
  EXPECT_EQ(submit_error(kHead + "[scheduler]\nslowdown = 2\n"),
            "app.toml:4:12: scheduler.slowdown: must be a table of numbers >= 1 (same_slot, same_machine, same_rack, "
            "cross_rack), got 2");
}

TEST(SchedulerTableAtSubmit, SuccessiveHalvingOverThreeJobsIsRefused) {
  // The field is named in full: the launcher once printed "scheduler.: ..." for this case.
  EXPECT_EQ(submit_error(kHead + kThreeJobs + "[scheduler]\nkind = \"successive-halving\"\nphase_iterations = [10, 10]\n"),
            "app.toml:6:8: scheduler.kind: successive halving needs a power-of-two number of jobs (jobs must be a "
            "power of two, got 3 from [hyperparameters])");
  EXPECT_EQ(submit_error(kHead + "[hyperparameters]\nlr = [1, 2, 3, 4]\n[scheduler]\nkind = \"successive-halving\"\n"),
            "app.toml:5:1: scheduler.phase_iterations: required for successive halving");
}

TEST(SchedulerTableAtSubmit, GoodTablesAreAcceptedAndReadAsTheLauncherReadsThem) {
  EXPECT_EQ(submit_error(kHead), "accepted");
  EXPECT_EQ(submit_error(kHead + "[hyperparameters]\nlr = [1, 2, 3, 4]\n[scheduler]\nkind = \"successive-halving\"\n"
                                 "phase_iterations = [20, 20, 40]\nserial_iter_time = 0.05\nmax_restarts = 0\n"
                                 "launcher = \"foreground\"\n"),
            "accepted");
  const auto table = parse_scheduler_table(
      "[scheduler]\nkind = \"successive-halving\"\nphase_iterations = [20, 40]\nlauncher = \"foreground\"\n", "a.toml", 2);
  EXPECT_TRUE(table.present);
  EXPECT_EQ(table.kind, SchedulerKind::kSuccessiveHalving);
  EXPECT_EQ(table.phase_iterations, (std::vector<double>{20, 40}));
  EXPECT_FALSE(table.started_by_coordinator);
  EXPECT_FALSE(parse_scheduler_table("name = \"x\"\n", "a.toml", 1).present);
  EXPECT_EQ(parse_scheduler_table("[scheduler]\niterations = 300\n", "a.toml", 1).phase_iterations, (std::vector<double>{300}));
  const auto slowdown = parse_scheduler_table("[scheduler.slowdown]\nsame_rack = 2\ncross_rack = 4.5\n", "a.toml", 1).slowdown;
  EXPECT_FALSE(slowdown[0].has_value());
  EXPECT_FALSE(slowdown[1].has_value());
  EXPECT_EQ(slowdown[2], 2.0);
  EXPECT_EQ(slowdown[3], 4.5);
}

}  // namespace
}  // namespace themis::spec
