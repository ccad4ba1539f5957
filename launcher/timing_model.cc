#include "launcher/timing_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace themis::launcher {
namespace {

constexpr int kRunningMeanSamples = 20;

std::size_t level_index(Locality level) { return static_cast<std::size_t>(level); }

}  // namespace

TimingModel::TimingModel(Seconds default_serial_iter_time, const bidder::SlowdownPriors& priors)
    : default_serial_(default_serial_iter_time), priors_(priors) {
  if (!(default_serial_iter_time > 0) || !std::isfinite(default_serial_iter_time)) {
    throw std::invalid_argument("timing model: default serial iteration time must be > 0 and finite, got " +
                                std::to_string(default_serial_iter_time));
  }
  bidder::SlowdownModel check(priors);  // validates the priors
}

void TimingModel::observe(int job, int gpus, Locality placement, Seconds seconds) {
  if (gpus < 1) throw std::invalid_argument("timing model: job " + std::to_string(job) + ": gpus must be >= 1, got " + std::to_string(gpus));
  if (!(seconds > 0) || !std::isfinite(seconds)) {
    throw std::invalid_argument("timing model: job " + std::to_string(job) +
                                ": iteration seconds must be > 0 and finite, got " + std::to_string(seconds));
  }
  auto& level = jobs_[job][level_index(placement)];
  if (level.samples > 0 && level.gpus != gpus) level = LevelStats{};  // a different gang: start over
  level.gpus = gpus;
  ++level.samples;
  const double weight = 1.0 / std::min(level.samples, kRunningMeanSamples);
  level.mean += weight * (seconds - level.mean);
}

void TimingModel::observe_start(Seconds seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds))
    throw std::invalid_argument("timing model: a start must take >= 0 and finite seconds, got " + std::to_string(seconds));
  starts_.push_back(seconds);
  if (starts_.size() > kStartSamples) starts_.pop_front();
}

Seconds TimingModel::start_overhead() const {
  if (starts_.empty()) return 0;
  std::vector<Seconds> sorted(starts_.begin(), starts_.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted[sorted.size() / 2];
}

std::optional<Seconds> TimingModel::measured_serial(const JobStats& stats) const {
  const bidder::SlowdownModel priors(priors_);
  for (int l = 0; l < kLocalityLevels; ++l) {
    const auto& level = stats[static_cast<std::size_t>(l)];
    if (level.samples == 0) continue;
    return level.mean * level.gpus / priors.prior(static_cast<Locality>(l));
  }
  return std::nullopt;
}

bool TimingModel::measured(int job) const {
  const auto it = jobs_.find(job);
  return it != jobs_.end() && measured_serial(it->second).has_value();
}

Seconds TimingModel::serial_iter_time(int job) const {
  if (const auto it = jobs_.find(job); it != jobs_.end()) {
    if (const auto serial = measured_serial(it->second)) return *serial;
  }
  std::vector<Seconds> known;
  for (const auto& [other, stats] : jobs_) {
    if (const auto serial = measured_serial(stats)) known.push_back(*serial);
  }
  if (known.empty()) return default_serial_;
  std::sort(known.begin(), known.end());
  return known[known.size() / 2];
}

bidder::SlowdownModel TimingModel::slowdown() const {
  bidder::SlowdownModel model(priors_);
  for (const auto& [job, stats] : jobs_) {
    const auto serial = measured_serial(stats);
    if (!serial) continue;
    bool reference_seen = false;
    for (int l = 0; l < kLocalityLevels; ++l) {
      const auto& level = stats[static_cast<std::size_t>(l)];
      if (level.samples == 0) continue;
      if (!reference_seen) {  // the reference level defines serial time; it says nothing about S
        reference_seen = true;
        continue;
      }
      model.observe(static_cast<Locality>(l), level.gpus, level.mean, *serial);
    }
  }
  return model;
}

std::optional<Seconds> TimingModel::mean_iter_time(int job, Locality placement) const {
  const auto it = jobs_.find(job);
  if (it == jobs_.end()) return std::nullopt;
  const auto& level = it->second[level_index(placement)];
  if (level.samples == 0) return std::nullopt;
  return level.mean;
}

}  // namespace themis::launcher
