#pragma once
// Models of the Themis paper's workload (Table 4) with their placement sensitivity: the slowdown S of
// a job whose GPUs span a given Locality. Sources are listed per model in model_catalog.cc and in
// docs/simulator.md.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace themis::sim {

enum class ModelCategory { kCV, kNLP, kSpeech };

struct ModelInfo {
  std::string name;
  ModelCategory category;
  std::array<double, 4> slowdown;  // by Locality: same slot, same machine, same rack, cross rack
  std::string source;              // where the sensitivity comes from
};

const std::vector<ModelInfo>& model_catalog();
const ModelInfo* find_model(std::string_view name);

}  // namespace themis::sim
