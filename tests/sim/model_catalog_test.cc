// The catalog's Gavel-derived sensitivities are what the shared Gavel throughput table says: the median
// over batch sizes and scale factors > 1 of K80 consolidated / unconsolidated steps/s, floored at 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "policy/arbiter/policies/bundle_choice.h"
#include "sim/model_catalog.h"
#include "sim/svg_plot.h"

namespace themis::sim {
namespace {

std::map<std::string, double> gavel_k80_medians(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::map<std::string, std::vector<double>> ratios;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    // job_type,model,batch_size,scale_factor,v100,p100,k80,v100_u,p100_u,k80_u
    if (f.size() < 10 || std::atoi(f[3].c_str()) <= 1 || f[6].empty() || f[9].empty()) continue;
    const double c = std::strtod(f[6].c_str(), nullptr);
    const double u = std::strtod(f[9].c_str(), nullptr);
    if (c > 0 && u > 0) ratios[f[1]].push_back(c / u);
  }
  std::map<std::string, double> out;
  for (auto& [model, v] : ratios) {
    std::sort(v.begin(), v.end());
    out[model] = v[v.size() / 2];
  }
  return out;
}

TEST(ModelCatalog, GavelDerivedSlowdownsMatchTheTable) {
  const std::string path = "/work/shared/traces/gavel/derived/job_table_simulation_throughputs.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no Gavel table at " << path;
  const auto medians = gavel_k80_medians(path);
  EXPECT_NEAR(find_model("LangModel")->slowdown[2], medians.at("LM"), 5e-4);
  EXPECT_NEAR(find_model("Transformer")->slowdown[2], medians.at("Transformer"), 5e-4);
  EXPECT_LT(medians.at("ResNet-50"), 1.0);
  EXPECT_EQ(find_model("ResNet50")->slowdown[2], 1.0);
}

TEST(ModelCatalog, PaperTableOneAndLevels) {
  const ModelInfo* vgg = find_model("VGG16");
  ASSERT_NE(vgg, nullptr);
  EXPECT_NEAR(vgg->slowdown[2], 103.6 / 80.4, 5e-4);
  EXPECT_NEAR(vgg->slowdown[3], 1 + 3 * (vgg->slowdown[2] - 1), 1e-12);
  EXPECT_EQ(vgg->slowdown[0], 1.0);
  EXPECT_EQ(find_model("Inception-v3")->slowdown[2], 1.0);
  EXPECT_EQ(find_model("nope"), nullptr);
}

TEST(BundleChoice, PrefersOneMachineTightestFitAndNearHeld) {
  ClusterSpec spec{"t", {{"big", "r0", {2, 2}}, {"small", "r0", {2}}, {"far", "r1", {4}}}};
  const Cluster cluster(spec);  // big: 0-3, small: 4-5, far: 6-9
  const std::vector<GpuIndex> all{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  using arbiter::policies::best_placed_bundle;
  EXPECT_EQ(best_placed_bundle(cluster, all, {}, 2), (std::vector<GpuIndex>{0, 1}));  // a slot
  EXPECT_EQ(best_placed_bundle(cluster, all, {}, 4), (std::vector<GpuIndex>{6, 7, 8, 9}));  // one slot of 4
  const std::vector<GpuIndex> no_far{0, 1, 2, 3, 4, 5};
  EXPECT_EQ(best_placed_bundle(cluster, no_far, {}, 4), (std::vector<GpuIndex>{0, 1, 2, 3}));  // one machine
  const std::vector<GpuIndex> near{7};
  EXPECT_EQ(best_placed_bundle(cluster, all, near, 3), (std::vector<GpuIndex>{6, 7, 8}));  // next to held
  const std::vector<GpuIndex> scattered{1, 3, 5, 9};
  EXPECT_EQ(cluster.locality(best_placed_bundle(cluster, scattered, {}, 3)), Locality::kSameRack);
  EXPECT_EQ(arbiter::policies::first_fit_bundle(all, 3), (std::vector<GpuIndex>{0, 1, 2}));
}

TEST(SvgPlot, OneCurveAndOneBarPerPolicy) {
  RunSummary a;
  a.policy = "themis";
  a.rho_sorted = {0.5, 0.9, 1.2};
  a.gpu_time = 7200;
  RunSummary b = a;
  b.policy = "gandiva";
  b.rho_sorted = {0.7, 2.0};
  const std::string cdf = rho_cdf_svg({a, b});
  const std::string bars = gpu_time_svg({a, b});
  auto count = [](const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(cdf, "<polyline"), 2u);
  EXPECT_EQ(count(bars, "<rect"), 3u);  // background + two bars
  EXPECT_NE(cdf.find(">gandiva</text>"), std::string::npos);
  EXPECT_EQ(cdf.rfind("</svg>\n"), cdf.size() - 7);
}

}  // namespace
}  // namespace themis::sim
