#include "worker/train_options.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

namespace themis::worker {
namespace {

void apply_hparams(TrainOptions& o, const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(std::string("THEMIS_HPARAMS: not JSON: ") + e.what(), 2);
  }
  if (!j.is_object()) throw UsageError("THEMIS_HPARAMS: expected a JSON object", 2);
  for (const auto& [key, value] : j.items()) {
    try {
      if (key == "model") o.model = value.get<std::string>();
      else if (key == "lr") o.lr = value.get<double>();
      else if (key == "momentum") o.momentum = value.get<double>();
      else if (key == "batch_size") o.batch_size = value.get<std::int64_t>();
      else if (key == "iterations") o.iterations = value.get<std::int64_t>();
      else if (key == "seed") o.seed = value.get<std::uint64_t>();
      else if (key == "checkpoint_every") o.checkpoint_every = value.get<std::int64_t>();
      else if (key == "keep_checkpoints") o.keep_checkpoints = value.get<std::int64_t>();
      else if (key == "hidden") o.hidden = value.get<std::int64_t>();
      else if (key == "dataset_size") o.dataset_size = value.get<std::int64_t>();
      else if (key == "threads") o.threads = value.get<std::int64_t>();
      else throw UsageError("THEMIS_HPARAMS: unknown key \"" + key + "\"", 2);
    } catch (const nlohmann::json::type_error&) {
      throw UsageError("THEMIS_HPARAMS: \"" + key + "\" has the wrong type (" + value.dump() + ")", 2);
    }
  }
}

void validate(const TrainOptions& o) {
  auto positive = [](const char* name, std::int64_t v) {
    if (v <= 0) throw UsageError(std::string(name) + " must be positive, got " + std::to_string(v), 2);
  };
  if (o.model != "mlp" && o.model != "cnn") throw UsageError("model must be mlp or cnn, got \"" + o.model + "\"", 2);
  if (!(o.lr > 0)) throw UsageError("lr must be positive", 2);
  if (!(o.momentum >= 0 && o.momentum < 1)) throw UsageError("momentum must be in [0, 1)", 2);
  positive("batch_size", o.batch_size);
  positive("hidden", o.hidden);
  positive("dataset_size", o.dataset_size);
  positive("threads", o.threads);
  positive("keep_checkpoints", o.keep_checkpoints);
  if (o.iterations < 0) throw UsageError("iterations must not be negative", 2);
  if (o.checkpoint_every < 0) throw UsageError("checkpoint_every must not be negative", 2);
  if (!(o.min_iteration_seconds >= 0 && o.min_iteration_seconds <= 60)) {
    std::ostringstream got;
    got << o.min_iteration_seconds;
    throw UsageError("min_iteration_seconds must be in [0, 60], got " + got.str(), 2);
  }
}

}  // namespace

std::map<std::string, std::string> TrainOptions::as_metadata() const {
  auto num = [](auto v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  return {{"model", model},           {"lr", num(lr)},         {"momentum", num(momentum)},
          {"batch_size", num(batch_size)}, {"seed", num(seed)},  {"hidden", num(hidden)},
          {"dataset_size", num(dataset_size)}};
}

TrainOptions parse_train_options(int argc, const char* const* argv, const std::optional<std::string>& hparams_json) {
  TrainOptions o;
  if (hparams_json && !hparams_json->empty()) apply_hparams(o, *hparams_json);
  CLI::App app{"themis-train: synchronous data-parallel SGD over c10d Gloo or NCCL (environment: docs/worker.md)"};
  app.add_option("--model", o.model, "mlp or cnn")->capture_default_str();
  app.add_option("--lr", o.lr, "learning rate")->capture_default_str();
  app.add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "samples per rank per iteration")->capture_default_str();
  app.add_option("--iterations", o.iterations, "total iterations of the job")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the data and the initial weights")->capture_default_str();
  app.add_option("--checkpoint-every", o.checkpoint_every, "iterations between checkpoints (0: on stop and at the end)")
      ->capture_default_str();
  app.add_option("--keep-checkpoints", o.keep_checkpoints, "checkpoints kept")->capture_default_str();
  app.add_option("--hidden", o.hidden, "MLP hidden width")->capture_default_str();
  app.add_option("--dataset-size", o.dataset_size, "synthetic samples")->capture_default_str();
  app.add_option("--threads", o.threads, "torch threads per rank")->capture_default_str();
  app.add_option("--min-iteration-seconds", o.min_iteration_seconds,
                 "pace: each iteration takes at least this long, the rest slept (0: unpaced)")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    throw UsageError(app.help(), 0);
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what(), 2);
  }
  validate(o);
  return o;
}

}  // namespace themis::worker
