#include "worker/train_options.h"

#include <gtest/gtest.h>

#include <vector>

namespace themis::worker {
namespace {

TrainOptions parse(const std::vector<const char*>& args, const std::optional<std::string>& hparams = std::nullopt) {
  const char* argv[16] = {"themis-train"};
  int argc = 1;
  for (const char* a : args) argv[argc++] = a;
  return parse_train_options(argc, argv, hparams);
}

std::string error_of(std::vector<const char*> args, const std::optional<std::string>& hparams = std::nullopt) {
  try {
    parse(args, hparams);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TrainOptions, CommandLineOverridesHparamsOverridesDefaults) {
  const TrainOptions d = parse({});
  EXPECT_EQ(d.model, "mlp");
  EXPECT_EQ(d.iterations, 100);
  const TrainOptions o = parse({"--lr", "0.2", "--model", "cnn"}, R"({"lr":0.01,"batch_size":256,"seed":9})");
  EXPECT_EQ(o.lr, 0.2);
  EXPECT_EQ(o.model, "cnn");
  EXPECT_EQ(o.batch_size, 256);
  EXPECT_EQ(o.seed, 9U);
  EXPECT_EQ(o.as_metadata().at("batch_size"), "256");
  EXPECT_EQ(d.min_iteration_seconds, 0.0);
  EXPECT_EQ(parse({"--min-iteration-seconds", "0.01"}).min_iteration_seconds, 0.01);
}

TEST(TrainOptions, BadValuesSayWhatIsWrong) {
  EXPECT_EQ(error_of({"--model", "vgg"}), "model must be mlp or cnn, got \"vgg\"");
  EXPECT_EQ(error_of({"--batch-size", "0"}), "batch_size must be positive, got 0");
  EXPECT_EQ(error_of({"--momentum", "1.5"}), "momentum must be in [0, 1)");
  EXPECT_EQ(error_of({"--min-iteration-seconds", "-1"}), "min_iteration_seconds must be in [0, 60], got -1");
  EXPECT_EQ(error_of({}, R"({"learning_rate":0.1})"), "THEMIS_HPARAMS: unknown key \"learning_rate\"");
  EXPECT_EQ(error_of({}, R"({"lr":"fast"})"), "THEMIS_HPARAMS: \"lr\" has the wrong type (\"fast\")");
  EXPECT_NE(error_of({}, "{oops").find("THEMIS_HPARAMS: not JSON"), std::string::npos);
  EXPECT_NE(error_of({"--no-such-flag"}).find("no-such-flag"), std::string::npos);
}

}  // namespace
}  // namespace themis::worker
