// themis-train: the built-in trainer. Models (MLP, small CNN) on synthetic data generated from a seed,
// trained with themis::worker::run_training.
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "worker/api.h"
#include "worker/train_options.h"

namespace themis::worker {
namespace {

constexpr std::int64_t kFeatures = 32;
constexpr std::int64_t kClasses = 10;
constexpr std::int64_t kImageSide = 16;

struct MlpImpl : torch::nn::Module {
  explicit MlpImpl(std::int64_t hidden)
      : fc1(register_module("fc1", torch::nn::Linear(kFeatures, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, hidden))),
        out(register_module("out", torch::nn::Linear(hidden, kClasses))) {}
  torch::Tensor forward(const torch::Tensor& x) { return out(torch::relu(fc2(torch::relu(fc1(x))))); }
  torch::nn::Linear fc1, fc2, out;
};
TORCH_MODULE(Mlp);

struct CnnImpl : torch::nn::Module {
  CnnImpl()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 8, 3).padding(1)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 16, 3).padding(1)))),
        out(register_module("out", torch::nn::Linear(16 * 4 * 4, kClasses))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::max_pool2d(torch::relu(conv1(x)), 2);
    h = torch::max_pool2d(torch::relu(conv2(h)), 2);
    return out(h.flatten(1));
  }
  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear out;
};
TORCH_MODULE(Cnn);

at::Generator generator(std::uint64_t seed) { return at::detail::createCPUGenerator(seed); }

// Synthetic, fully determined by the seed. MLP: Gaussian inputs labelled by a random linear teacher.
// CNN: a bright 4x4 patch whose position on a 4x4 grid is the class, in Gaussian noise.
std::pair<torch::Tensor, torch::Tensor> make_dataset(const TrainOptions& o) {
  auto gen = generator(o.seed * 0x9E3779B97F4A7C15ULL + 1);
  if (o.model == "mlp") {
    auto x = torch::randn({o.dataset_size, kFeatures}, gen);
    auto teacher = torch::randn({kFeatures, kClasses}, gen);
    return {x, x.matmul(teacher).argmax(1)};
  }
  auto labels = torch::randint(kClasses, {o.dataset_size}, gen, torch::kInt64);
  auto images = torch::randn({o.dataset_size, 1, kImageSide, kImageSide}, gen).mul_(0.5);
  auto acc = images.accessor<float, 4>();
  auto lab = labels.accessor<std::int64_t, 1>();
  for (std::int64_t i = 0; i < o.dataset_size; ++i) {
    const std::int64_t row = (lab[i] / 4) * 4, col = (lab[i] % 4) * 4;
    for (std::int64_t r = 0; r < 4; ++r) {
      for (std::int64_t c = 0; c < 4; ++c) acc[i][0][row + r][col + c] += 1.5F;
    }
  }
  return {images, labels};
}

// Epoch-shuffled sampling of the global batch (batch_size x world size); rank r takes slice r.
// The position (epoch, cursor) is the whole data state, so rank 0's checkpoint resumes every rank.
// Data and model are made on the CPU from the seeds, then moved to the session's device, so a run on a
// GPU starts from the same weights and data as one on the CPU.
class Trainer final : public Trainable {
 public:
  Trainer(const TrainOptions& o, int rank, int world_size, torch::Device device)
      : options_(o), rank_(rank), world_(world_size), device_(device) {
    std::tie(inputs_, labels_) = make_dataset(o);
    inputs_ = inputs_.to(device_);
    labels_ = labels_.to(device_);
    if (o.batch_size * world_size > o.dataset_size) {
      throw std::invalid_argument("batch_size x world size (" + std::to_string(o.batch_size * world_size) +
                                  ") exceeds dataset_size (" + std::to_string(o.dataset_size) + ")");
    }
    // Each rank starts from its own initial weights; the broadcast from rank 0 makes them equal.
    torch::manual_seed(o.seed + 7919ULL * static_cast<std::uint64_t>(rank));
    if (o.model == "mlp") {
      mlp_ = Mlp(o.hidden);
      module_ = mlp_.ptr();
    } else {
      cnn_ = Cnn();
      module_ = cnn_.ptr();
    }
    module_->to(device_);
    optimizer_ = std::make_unique<torch::optim::SGD>(
        module_->parameters(), torch::optim::SGDOptions(o.lr).momentum(o.momentum));
    shuffle();
  }

  torch::nn::Module& module() override { return *module_; }

  double forward_backward(std::int64_t) override {
    const std::int64_t global = options_.batch_size * world_;
    if (cursor_ + global > options_.dataset_size) {
      ++epoch_;
      cursor_ = 0;
      shuffle();
    }
    const auto begin = cursor_ + options_.batch_size * rank_;
    const auto index = order_.slice(0, begin, begin + options_.batch_size).to(device_);
    cursor_ += global;
    optimizer_->zero_grad();
    const auto x = inputs_.index_select(0, index);
    const auto logits = mlp_ ? mlp_->forward(x) : cnn_->forward(x);
    auto loss = torch::nn::functional::cross_entropy(logits, labels_.index_select(0, index));
    loss.backward();
    return loss.item<double>();
  }

  void apply_gradients() override { optimizer_->step(); }

  void save_state(checkpoint::Checkpoint& out) override {
    out.blobs["model"] = serialize_module(*module_);
    out.blobs["optimizer"] = serialize_optimizer(*optimizer_);
    out.blobs["data"] = "epoch=" + std::to_string(epoch_) + " cursor=" + std::to_string(cursor_);
  }

  void load_state(const checkpoint::Checkpoint& in) override {
    const auto need = [&](const char* name) -> const std::string& {
      const auto it = in.blobs.find(name);
      if (it == in.blobs.end()) throw std::runtime_error(std::string("checkpoint has no \"") + name + "\" blob");
      return it->second;
    };
    const auto model = in.metadata.find("model");
    if (model != in.metadata.end() && model->second != options_.model) {
      throw std::runtime_error("checkpoint holds model " + model->second + ", this run trains " + options_.model);
    }
    deserialize_module(*module_, need("model"));
    deserialize_optimizer(*optimizer_, need("optimizer"));
    std::istringstream data(need("data"));
    std::string epoch, cursor;
    data >> epoch >> cursor;
    if (!epoch.starts_with("epoch=") || !cursor.starts_with("cursor=")) {
      throw std::runtime_error("checkpoint \"data\" blob is malformed: " + need("data"));
    }
    epoch_ = std::stoll(epoch.substr(6));
    cursor_ = std::stoll(cursor.substr(7));
    shuffle();
  }

 private:
  void shuffle() {
    auto gen = generator(options_.seed * 1000003ULL + static_cast<std::uint64_t>(epoch_) + 17);
    order_ = torch::randperm(options_.dataset_size, gen, torch::kInt64);
  }

  TrainOptions options_;
  int rank_;
  int world_;
  torch::Device device_;
  torch::Tensor inputs_, labels_, order_;
  Mlp mlp_{nullptr};
  Cnn cnn_{nullptr};
  std::shared_ptr<torch::nn::Module> module_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  std::int64_t epoch_ = 0;
  std::int64_t cursor_ = 0;
};

int train_main(int argc, char** argv) {
  TrainOptions options;
  try {
    const char* hparams = std::getenv("THEMIS_HPARAMS");
    options = parse_train_options(argc, argv, hparams ? std::optional<std::string>(hparams) : std::nullopt);
  } catch (const UsageError& e) {
    std::fprintf(e.exit_code == 0 ? stdout : stderr, "%s\n", e.what());
    return e.exit_code;
  }
  WorkerEnv env;
  try {
    env = worker_env_from_process();
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "themis-train: %s\n", e.what());
    return kExitConfig;
  }
  torch::set_num_threads(static_cast<int>(options.threads));
  std::unique_ptr<Session> session;
  try {
    SessionOptions session_options;
    session_options.keep_checkpoints = static_cast<std::size_t>(options.keep_checkpoints);
    session = std::make_unique<Session>(env, session_options);
  } catch (const CommunicationError& e) {
    std::fprintf(stderr, "themis-train: rank %d: %s\n", env.rank, e.what());
    return kExitCommunicationFailure;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "themis-train: rank %d: %s\n", env.rank, e.what());
    return kExitConfig;
  }
  std::unique_ptr<Trainer> trainer;
  try {
    trainer = std::make_unique<Trainer>(options, env.rank, env.world_size, session->device());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "themis-train: %s\n", e.what());
    return kExitUsage;
  }
  RunOptions run;
  run.iterations = options.iterations;
  run.checkpoint_every = options.checkpoint_every;
  run.min_iteration_seconds = options.min_iteration_seconds;
  run.metadata = options.as_metadata();
  const RunResult result = run_training(*session, *trainer, run);
  if (!result.message.empty()) {
    std::fprintf(stderr, "themis-train: rank %d: %s: %s\n", env.rank, to_string(result.status), result.message.c_str());
  }
  const int code = exit_code(result.status);
  if (result.status == RunStatus::kCommunicationFailure) {
    // Gloo's threads may still wait on the dead peer; tearing the process group down could block.
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}

}  // namespace
}  // namespace themis::worker

int main(int argc, char** argv) { return themis::worker::train_main(argc, argv); }
