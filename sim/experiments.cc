#include "sim/experiments.h"

#include <stdexcept>
#include <string>

#include "sim/model_catalog.h"

namespace themis::sim {

ClusterSpec shrink_cluster(const ClusterSpec& spec, int k) {
  if (k < 1) throw std::invalid_argument("shrink_cluster: k must be >= 1, got " + std::to_string(k));
  ClusterSpec out{spec.name + "/" + std::to_string(k), {}};
  int position = 0;
  for (std::size_t m = 0; m < spec.machines.size(); ++m) {
    if (m > 0 && spec.machines[m].gpus_per_slot != spec.machines[m - 1].gpus_per_slot) position = 0;
    if (position % k == 0) out.machines.push_back(spec.machines[m]);
    ++position;
  }
  return out;
}

ClusterSpec truth_telling_cluster() {
  ClusterSpec spec{"truth-telling-64", {}};
  spec.machines.push_back({"g8-01", "rack0", {2, 2, 2, 2}});
  for (int m = 1; m <= 28; ++m) {
    std::string num = std::to_string(m);
    if (num.size() < 2) num = "0" + num;
    spec.machines.push_back({"g2-" + num, "rack0", {2}});
  }
  return spec;
}

std::vector<AppSpec> truth_telling_workload() {
  const ModelInfo* vgg = find_model("VGG16");
  std::vector<AppSpec> apps;
  for (int a = 0; a < 8; ++a) {
    AppSpec app;
    app.name = "tt-" + std::to_string(a);
    for (int j = 0; j < 2; ++j) {
      JobSpec job;
      job.model = vgg->name;
      job.slowdown = vgg->slowdown;
      job.gpus = 8;
      job.serial_iter_time = 1;
      job.iterations = 8 * 4 * 3600;
      app.jobs.push_back(job);
    }
    apps.push_back(std::move(app));
  }
  return apps;
}

}  // namespace themis::sim
