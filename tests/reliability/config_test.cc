#include <gtest/gtest.h>

#include <fstream>

#include "coordinator/config.h"
#include "tests/store/temp_dir.h"

namespace themis::coordinator {
namespace {

class ReliabilityConfig : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    const std::string path = dir_.file("themis.toml");
    std::ofstream(path) << text;
    return path;
  }
  std::string error_of(const std::string& text) {
    try {
      load_coordinator_config(write(text));
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }
  testing::TempDir dir_;
};

TEST_F(ReliabilityConfig, DefaultsWithoutTables) {
  const auto c = load_coordinator_config(write("[coordinator]\nseed = 3\n"));
  EXPECT_EQ(c.retry.of(FailureClass::kCommunication).max_retries, 3);
  EXPECT_EQ(c.retry.of(FailureClass::kUserError).max_retries, 0);
  EXPECT_EQ(c.admission.max_demand_ratio, 0);
}

TEST_F(ReliabilityConfig, RetryAndAdmissionTablesAreRead) {
  const auto c = load_coordinator_config(write(
      "[coordinator]\nseed = 3\n\n[retry.communication]\nmax_retries = 5\nbackoff = \"2s\"\nbackoff_max = \"1m\"\n"
      "backoff_multiplier = 3.0\n\n[retry.out_of_memory]\nmax_retries = 1\n\n[admission]\nmax_demand_ratio = 1.5\n"));
  const auto& comm = c.retry.of(FailureClass::kCommunication);
  EXPECT_EQ(comm.max_retries, 5);
  EXPECT_DOUBLE_EQ(comm.backoff_s, 2);
  EXPECT_DOUBLE_EQ(comm.backoff_max_s, 60);
  EXPECT_DOUBLE_EQ(comm.backoff_multiplier, 3);
  EXPECT_EQ(c.retry.of(FailureClass::kOutOfMemory).max_retries, 1);
  EXPECT_DOUBLE_EQ(c.admission.max_demand_ratio, 1.5);
  // Keys not given keep their defaults.
  EXPECT_DOUBLE_EQ(c.retry.of(FailureClass::kOutOfMemory).backoff_s, 0);
}

TEST_F(ReliabilityConfig, BadValuesNameTheFieldAndTheLine) {
  EXPECT_NE(error_of("[retry.oom]\nmax_retries = 1\n").find(":1:1: retry.oom: unknown failure class"), std::string::npos)
      << error_of("[retry.oom]\nmax_retries = 1\n");
  EXPECT_NE(error_of("[retry.communication]\nmax_retries = -2\n").find(":2:15: retry.communication.max_retries: must be"),
            std::string::npos);
  EXPECT_NE(error_of("[retry.communication]\nbackoff = \"soon\"\n").find("retry.communication.backoff: "), std::string::npos);
  EXPECT_NE(error_of("[retry.preemption]\nmax_retries = 2\n").find("retry.preemption.max_retries: a preempted job always resumes"),
            std::string::npos);
  EXPECT_NE(error_of("[admission]\nmax_demand_ratio = -1\n").find(":2:20: admission.max_demand_ratio: must be a number"),
            std::string::npos)
      << error_of("[admission]\nmax_demand_ratio = -1\n");
  EXPECT_NE(error_of("[admission]\ncap = 3\n").find("admission.cap: unknown key"), std::string::npos);
}

TEST_F(ReliabilityConfig, FilterRuleDefaultsToOfferBoundedAsInTheSimulatorAndRejectsOtherNames) {
  EXPECT_EQ(load_coordinator_config(write("[coordinator]\nseed = 3\n")).filter, arbiter::FilterRule::kOfferBounded);
  EXPECT_EQ(load_coordinator_config(write("[coordinator]\nfilter = \"fixed\"\n")).filter, arbiter::FilterRule::kFixed);
  EXPECT_EQ(load_coordinator_config(write("[coordinator]\nfilter = \"adaptive\"\n")).filter, arbiter::FilterRule::kAdaptive);
  EXPECT_NE(error_of("[coordinator]\nfilter = \"half\"\n").find(":2:10: coordinator.filter: must be one of offer-bounded, fixed, adaptive"),
            std::string::npos)
      << error_of("[coordinator]\nfilter = \"half\"\n");
}

TEST_F(ReliabilityConfig, RejectInfeasibleDefaultsToTrueAndIsABoolean) {
  EXPECT_TRUE(load_coordinator_config(write("[coordinator]\nseed = 3\n")).reject_infeasible);
  EXPECT_FALSE(load_coordinator_config(write("[coordinator]\nreject_infeasible = false\n")).reject_infeasible);
  EXPECT_NE(error_of("[coordinator]\nreject_infeasible = \"no\"\n").find("coordinator.reject_infeasible: must be true or false"),
            std::string::npos)
      << error_of("[coordinator]\nreject_infeasible = \"no\"\n");
}

TEST_F(ReliabilityConfig, RoundingDefaultsToTimeShareAsInTheSimulatorAndIsARule) {
  EXPECT_EQ(load_coordinator_config(write("[coordinator]\nseed = 3\n")).rounding, "time-share");
  EXPECT_EQ(load_coordinator_config(write("[coordinator]\nrounding = \"nearest\"\n")).rounding, "nearest");
  EXPECT_NE(error_of("[coordinator]\nrounding = \"floor\"\n").find(":2:12: coordinator.rounding: must be one of nearest, lottery, time-share"),
            std::string::npos)
      << error_of("[coordinator]\nrounding = \"floor\"\n");
}

TEST_F(ReliabilityConfig, SolverDefaultsToShapeAsInTheSimulatorAndIsASolver) {
  EXPECT_EQ(load_coordinator_config(write("[coordinator]\nseed = 3\n")).solver, "shape");
  EXPECT_EQ(load_coordinator_config(write("[coordinator]\nsolver = \"cbc\"\n")).solver, "cbc");
  EXPECT_NE(error_of("[coordinator]\nsolver = \"gurobi\"\n").find(":2:10: coordinator.solver: must be one of cbc, shape, bnb"),
            std::string::npos)
      << error_of("[coordinator]\nsolver = \"gurobi\"\n");
}

TEST_F(ReliabilityConfig, GangReservationDefaultsToOnAsInTheSimulatorAndIsABoolean) {
  EXPECT_TRUE(load_coordinator_config(write("[coordinator]\nseed = 3\n")).gang_reservation);
  EXPECT_FALSE(load_coordinator_config(write("[coordinator]\ngang_reservation = false\n")).gang_reservation);
  EXPECT_NE(error_of("[coordinator]\ngang_reservation = 1\n").find(":2:20: coordinator.gang_reservation: must be true or false"),
            std::string::npos)
      << error_of("[coordinator]\ngang_reservation = 1\n");
}

TEST_F(ReliabilityConfig, GangBackfillDefaultsToOffAsInTheSimulatorAndIsABoolean) {
  EXPECT_FALSE(load_coordinator_config(write("[coordinator]\nseed = 3\n")).gang_backfill);
  EXPECT_TRUE(load_coordinator_config(write("[coordinator]\ngang_backfill = true\n")).gang_backfill);
  EXPECT_NE(error_of("[coordinator]\ngang_backfill = \"yes\"\n").find(":2:17: coordinator.gang_backfill: must be true or false"),
            std::string::npos)
      << error_of("[coordinator]\ngang_backfill = \"yes\"\n");
}

TEST_F(ReliabilityConfig, UsersTableMapsPrincipalsToUnixAccountsAndDefaultsToTheSameName) {
  const auto c = load_coordinator_config(write("[coordinator]\nseed = 3\n\n[users]\nalice = \"alice\"\nml-team = \"mlsvc\"\n"));
  EXPECT_EQ(unix_account(c, "alice"), "alice");
  EXPECT_EQ(unix_account(c, "ml-team"), "mlsvc");
  EXPECT_EQ(unix_account(c, "bob"), "bob");  // no entry: the account of the same name
  EXPECT_NE(error_of("[users]\nalice = \"Alice Smith\"\n").find(":2:9: users.alice: 'Alice Smith' is not a Unix user name"),
            std::string::npos)
      << error_of("[users]\nalice = \"Alice Smith\"\n");
  EXPECT_NE(error_of("[users]\nalice = 1000\n").find("users.alice: must be a string"), std::string::npos);
  EXPECT_NE(error_of("users = \"alice\"\n").find("users: must be a table"), std::string::npos);
}

}  // namespace
}  // namespace themis::coordinator
