#include "sim/model_catalog.h"

namespace themis::sim {
namespace {

// Cross-machine slowdown s -> the four levels. Same slot and same machine run at full speed; a bundle
// spanning machines in one rack pays s; crossing racks pays three times the excess, the ratio of the
// paper's priors (cross machine 1.1, cross rack 1.3; Themis footnote 3).
ModelInfo model(std::string name, ModelCategory category, double cross_machine, std::string source) {
  const double cross_rack = 1.0 + 3.0 * (cross_machine - 1.0);
  return {std::move(name), category, {1.0, 1.0, cross_machine, cross_rack}, std::move(source)};
}

}  // namespace

const std::vector<ModelInfo>& model_catalog() {
  static const std::vector<ModelInfo> catalog = {
      // CV (10%): Themis Table 1 measures VGG16 (103.6 vs 80.4 images/s) and Inception-v3 (242 vs 243).
      model("VGG16", ModelCategory::kCV, 1.289, "Themis Table 1: 103.6/80.4"),
      model("VGG19", ModelCategory::kCV, 1.289, "assumed as VGG16 (same structure, arXiv Fig 5)"),
      model("AlexNet", ModelCategory::kCV, 1.289, "assumed as VGG16 (large fully-connected layers)"),
      model("Inception-v3", ModelCategory::kCV, 1.0, "Themis Table 1: 242/243"),
      model("ResNet50", ModelCategory::kCV, 1.0,
            "Gavel ResNet-50 K80 consolidated/unconsolidated median 0.874, floored at 1"),
      // NLP (60%).
      model("Bi-Att-Flow", ModelCategory::kNLP, 1.1, "Themis prior (footnote 3)"),
      model("LangModel", ModelCategory::kNLP, 1.198, "Gavel LM K80 consolidated/unconsolidated median"),
      model("GNMT", ModelCategory::kNLP, 1.198, "assumed as LangModel (large embeddings)"),
      model("Transformer", ModelCategory::kNLP, 1.090,
            "Gavel Transformer K80 consolidated/unconsolidated median"),
      // Speech (30%).
      model("WaveNet", ModelCategory::kSpeech, 1.1, "Themis prior (footnote 3)"),
      model("DeepSpeech", ModelCategory::kSpeech, 1.1, "Themis prior (footnote 3)"),
  };
  return catalog;
}

const ModelInfo* find_model(std::string_view name) {
  for (const ModelInfo& m : model_catalog())
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace themis::sim
