// Hyper-parameters of an app without a launcher go from the TOML spec to themis-train typed: the
// coordinator stores each job's values as JSON with their TOML types and passes them as THEMIS_HPARAMS.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "spec/app_spec.h"
#include "process.h"
#include "worker/train_options.h"

namespace themis::worker::testing {
namespace {

using std::chrono::seconds;

constexpr const char* kSpec = R"(name = "typed"
command = ["themis-train"]
[hyperparameters]
lr = [0.05, 0.2]
batch_size = [16]
model = ["mlp"]
nesterov_free = [true]
)";

TEST(SpecHyperparameters, KeepTheirTomlTypes) {
  const auto spec = spec::parse_app_spec(kSpec, "typed.toml");
  ASSERT_EQ(spec.jobs.size(), 2U);
  // Name order, the last varying fastest: batch_size, lr, model, nesterov_free.
  const auto job1 = nlohmann::json::parse(spec.jobs[1].hparams_json);
  EXPECT_TRUE(job1["lr"].is_number_float());
  EXPECT_DOUBLE_EQ(job1["lr"].get<double>(), 0.2);
  EXPECT_TRUE(job1["batch_size"].is_number_integer());
  EXPECT_EQ(job1["batch_size"].get<int>(), 16);
  EXPECT_TRUE(job1["model"].is_string());
  EXPECT_TRUE(job1["nesterov_free"].is_boolean());
  // Placeholders still see the text.
  EXPECT_EQ(spec.jobs[1].hparams.at("lr"), "0.2");
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(spec.jobs[0].hparams_json)["lr"].get<double>(), 0.05);
}

TEST(SpecHyperparameters, ReachThemisTrainsOptionsAsNumbers) {
  const auto spec = spec::parse_app_spec(
      "name = \"typed\"\ncommand = [\"themis-train\"]\nhyperparameters = { lr = [0.02], batch_size = [16], hidden = [8] }\n",
      "typed.toml");
  const char* argv[] = {"themis-train"};
  const auto options = parse_train_options(1, argv, spec.jobs[0].hparams_json);
  EXPECT_DOUBLE_EQ(options.lr, 0.02);
  EXPECT_EQ(options.batch_size, 16);
  EXPECT_EQ(options.hidden, 8);
}

TEST(SpecHyperparameters, ARealThemisTrainRunsWithThem) {
  TempDir dir;
  const auto spec = spec::parse_app_spec(
      "name = \"typed\"\ncommand = [\"themis-train\"]\nhyperparameters = { lr = [0.02], batch_size = [16], iterations = [3] }\n",
      "typed.toml");
  const Rank typed = spawn_train({}, {{"THEMIS_HPARAMS", spec.jobs[0].hparams_json}}, dir.path() / "typed");
  const Exit exit = wait_for(typed, seconds(60));
  ASSERT_TRUE(exit.exited && exit.code == 0) << read_text(typed.stderr_path);
  EXPECT_EQ(find_event(typed.stdout_path, "exit")->iteration, 3);
  // The same values as text, which is what the coordinator used to pass, are refused.
  const Rank text = spawn_train({}, {{"THEMIS_HPARAMS", R"({"lr":"0.02","batch_size":"16","iterations":"3"})"}},
                                dir.path() / "text");
  const Exit refused = wait_for(text, seconds(60));
  EXPECT_TRUE(refused.exited);
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(read_text(text.stderr_path).find("wrong type"), std::string::npos) << read_text(text.stderr_path);
}

}  // namespace
}  // namespace themis::worker::testing
