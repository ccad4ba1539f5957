#pragma once
// themis-train's hyper-parameters. Sources, later wins: defaults, THEMIS_HPARAMS (a JSON object with
// the same names, e.g. {"lr":0.01,"batch_size":256}), the command line (--lr 0.01 --batch-size 256).
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

namespace themis::worker {

struct TrainOptions {
  std::string model = "mlp";  // mlp | cnn
  double lr = 0.05;
  double momentum = 0.9;
  std::int64_t batch_size = 32;  // per rank
  std::int64_t iterations = 100;
  std::uint64_t seed = 1;
  std::int64_t checkpoint_every = 0;
  std::int64_t keep_checkpoints = 3;
  std::int64_t hidden = 64;           // MLP hidden width (two hidden layers)
  std::int64_t dataset_size = 2048;   // synthetic samples
  std::int64_t threads = 1;           // torch intra-op threads per rank
  double min_iteration_seconds = 0;   // pace: an iteration takes at least this long (0: as fast as it runs)
  std::map<std::string, std::string> as_metadata() const;
};

// Thrown for bad arguments or hyper-parameters; exit_code is 0 for --help (message holds the help text).
class UsageError : public std::runtime_error {
 public:
  UsageError(const std::string& message, int code) : std::runtime_error(message), exit_code(code) {}
  int exit_code;
};

// Parses argv and the THEMIS_HPARAMS JSON (nullopt when unset); throws UsageError.
TrainOptions parse_train_options(int argc, const char* const* argv, const std::optional<std::string>& hparams_json);

}  // namespace themis::worker
