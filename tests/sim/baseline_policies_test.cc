// The baselines as their authors run them (docs/simulator.md, "Policies"), on hand-checked rounds.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "policy/arbiter/policies/ftf_allocation.h"
#include "policy/arbiter/policies/registry.h"

namespace themis::arbiter::policies {
namespace {

class FakeApp final : public AppModel {
 public:
  FakeApp(AppId id, int demand, Seconds attained, int gang = 1) : id_(id), demand_(demand), attained_(attained), gang_(gang) {}
  AppId id() const override { return id_; }
  double current_rho() const override { return 1; }
  int extra_demand() const override { return demand_; }
  int usable_extra(int gpus) const override { return std::min(gpus, demand_) / gang_ * gang_; }
  Bid bid(const Offer&) override { return {id_, 1, {}}; }
  Seconds attained_service() const override { return attained_; }
  Seconds remaining_service() const override { return 0; }
  Seconds remaining_time(std::span<const GpuIndex>) const override { return 0; }
  double loss_decrease(std::span<const GpuIndex>) const override { return 0; }
  double placement_score(std::span<const GpuIndex>) const override { return 1; }
  std::optional<FinishTimeTerms> finish_time_terms() const override { return terms_; }
  void set_terms(FinishTimeTerms t) { terms_ = t; }

 private:
  AppId id_;
  int demand_;
  Seconds attained_;
  int gang_;
  std::optional<FinishTimeTerms> terms_;
};

// `machines` machines of one slot of `per_machine` GPUs, all in one rack.
Cluster cluster_of(int machines, int per_machine) {
  ClusterSpec spec{"c", {}};
  for (int m = 0; m < machines; ++m) spec.machines.push_back({"m" + std::to_string(m), "r0", {per_machine}});
  return Cluster(spec);
}

std::map<AppId, std::vector<GpuIndex>> granted(const RoundOutcome& out) {
  std::map<AppId, std::vector<GpuIndex>> by_app;
  for (const Grant& g : out.grants) by_app[g.app] = g.gpus;
  return by_app;
}

RoundInput round_of(const Cluster& cluster, Seconds now, std::vector<GpuIndex> free, std::vector<Lease> leases,
                    std::vector<AppModel*> apps) {
  return RoundInput{&cluster, 1, now, std::move(free), std::move(leases), std::move(apps)};
}

// 2 GPUs, three apps wanting 2 each, a share of 2/3 GPU each: this round the two that have received
// least for their share, b (50 GPU-s) then a (100), take one GPU each (a turn), c (300) waits. Without a
// turn for shares below one GPU, or with ties by id, c's order would not matter and a would go first.
TEST(MaxMin, LeastServedForItsShareGoesFirstNotTheLowestId) {
  const Cluster cluster = cluster_of(1, 2);
  FakeApp a(0, 2, 100), b(1, 2, 50), c(2, 2, 300);
  Rng rng(1);
  auto out = granted(make_policy("max-min")->run_round(round_of(cluster, 0, {0, 1}, {}, {&a, &b, &c}), rng));
  EXPECT_EQ(out[1], (std::vector<GpuIndex>{0}));
  EXPECT_EQ(out[0], (std::vector<GpuIndex>{1}));
  EXPECT_EQ(out.count(2), 0u);
}

// A gang wider than the share: 4 GPUs, two apps, shares 2 each; a's gangs are 4 wide and it has been
// served least, so on its turn it takes one whole gang (all 4), b none this round.
TEST(MaxMin, AGangWiderThanItsShareTakesOneGangOnItsTurn) {
  const Cluster cluster = cluster_of(1, 4);
  FakeApp a(0, 4, 0, 4), b(1, 4, 100);
  Rng rng(1);
  auto out = granted(make_policy("max-min")->run_round(round_of(cluster, 0, {0, 1, 2, 3}, {}, {&a, &b}), rng));
  EXPECT_EQ(out[0].size(), 4u);
  EXPECT_EQ(out.count(1), 0u);
}

// 4 GPUs, two apps wanting 4 with the same service: each gets its share (2) first, then nothing is left.
// A rigid app of 3-GPU gangs cannot use its share of 2 and gets nothing: the other takes all 4.
TEST(MaxMin, SharesFirstAndOnlyWholeGangs) {
  const Cluster cluster = cluster_of(1, 4);
  FakeApp a(0, 4, 0), b(1, 4, 0);
  Rng rng(1);
  auto out = granted(make_policy("max-min")->run_round(round_of(cluster, 0, {0, 1, 2, 3}, {}, {&a, &b}), rng));
  EXPECT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[1].size(), 2u);
  FakeApp g(0, 3, 500, 3), e(1, 4, 0);
  out = granted(make_policy("max-min")->run_round(round_of(cluster, 0, {0, 1, 2, 3}, {}, {&g, &e}), rng));
  EXPECT_EQ(out.count(0), 0u);
  EXPECT_EQ(out[1].size(), 4u);
}

// Two machines of 2 GPUs, free {0, 2, 3}: the app that has run least per GPU (a: 0 s) goes first and
// takes the best-placed pair {2, 3} on one machine; b (100 GPU-s over 1 GPU) gets GPU 0.
TEST(Gandiva, TurnsByTimeRunThenBestPlacedBundle) {
  const Cluster cluster = cluster_of(2, 2);
  FakeApp b(0, 1, 100), a(1, 2, 0);
  Rng rng(1);
  auto out = granted(make_policy("gandiva")->run_round(round_of(cluster, 0, {0, 2, 3}, {}, {&b, &a}), rng));
  EXPECT_EQ(out[1], (std::vector<GpuIndex>{2, 3}));
  EXPECT_EQ(out[0], (std::vector<GpuIndex>{0}));
}

// 2D-LAS with the default threshold of 3600 GPU-s: b (100 GPU-s, queue 0) goes before a (4000 GPU-s,
// queue 1) though a arrived first. a ran 100 s (0–100) and then waited; at t = 1000 it has waited
// 900 s >= 8 × 100 s and is promoted to queue 0, where arrival order (a first) decides.
TEST(Tiresias, QueuesByAttainedServiceAndPromotesTheStarved) {
  const Cluster cluster = cluster_of(1, 2);
  FakeApp a(0, 2, 4000), b(1, 2, 100);
  auto tiresias = make_policy("tiresias");
  Rng rng(1);
  tiresias->run_round(round_of(cluster, 0, {}, {{0, 0, 0, 0, 600}, {1, 0, 0, 0, 600}}, {&a, &b}), rng);
  auto out = granted(tiresias->run_round(round_of(cluster, 100, {0, 1}, {}, {&a, &b}), rng));
  EXPECT_EQ(out.count(0), 0u);
  EXPECT_EQ(out[1], (std::vector<GpuIndex>{0, 1}));
  tiresias->run_round(round_of(cluster, 500, {}, {{0, 1, 0, 100, 700}, {1, 1, 0, 100, 700}}, {&a, &b}), rng);
  out = granted(tiresias->run_round(round_of(cluster, 1000, {0, 1}, {}, {&a, &b}), rng));
  EXPECT_EQ(out[0], (std::vector<GpuIndex>{0, 1}));
  EXPECT_EQ(out.count(1), 0u);
}

TEST(Tiresias, WithoutPromotionTheLowerQueueWaits) {
  const Cluster cluster = cluster_of(1, 2);
  FakeApp a(0, 2, 4000), b(1, 2, 100);
  PolicySettings settings;
  settings.tiresias.promote_knob = 0;  // never
  auto tiresias = make_policy("tiresias", settings);
  Rng rng(1);
  tiresias->run_round(round_of(cluster, 0, {}, {{0, 0, 0, 0, 600}, {1, 0, 0, 0, 600}}, {&a, &b}), rng);
  tiresias->run_round(round_of(cluster, 100, {0, 1}, {}, {&a, &b}), rng);
  auto out = granted(tiresias->run_round(round_of(cluster, 1000, {0, 1}, {}, {&a, &b}), rng));
  EXPECT_EQ(out[1], (std::vector<GpuIndex>{0, 1}));
}

// Two apps of demand 2 on 2 GPUs, 100 s of work each, T_id 200 s, none elapsed: half the time each,
// ρ = (0 + 100 / 0.5) / 200 = 1.
TEST(FtfAllocation, EqualAppsSplitTime) {
  const auto x = finish_time_fair_allocation({{0, 100, 200, 2}, {0, 100, 200, 2}}, 2);
  EXPECT_NEAR(x.fraction[0], 0.5, 1e-9);
  EXPECT_NEAR(x.fraction[1], 0.5, 1e-9);
  EXPECT_NEAR(x.max_rho, 1.0, 1e-9);
}

// One GPU; a has waited 100 s, b none; both 100 s of work, T_id 200 s. ρ* solves
// 100 / (200ρ − 100) + 100 / (200ρ) = 1: 200ρ = (300 + √50000) / 2 = 261.803..., so ρ* = 1.309017,
// x_a = 100 / 161.803 = 0.618034, x_b = 100 / 261.803 = 0.381966. With two GPUs both fit at ρ = 1
// (a's floor: (100 + 100) / 200), b needing only half its time.
TEST(FtfAllocation, MinimisesTheLargestRho) {
  auto x = finish_time_fair_allocation({{100, 100, 200, 1}, {0, 100, 200, 1}}, 1);
  EXPECT_NEAR(x.max_rho, 1.309017, 1e-6);
  EXPECT_NEAR(x.fraction[0], 0.618034, 1e-6);
  EXPECT_NEAR(x.fraction[1], 0.381966, 1e-6);
  x = finish_time_fair_allocation({{100, 100, 200, 1}, {0, 100, 200, 1}}, 2);
  EXPECT_NEAR(x.max_rho, 1.0, 1e-9);
  EXPECT_NEAR(x.fraction[0], 1.0, 1e-9);
  EXPECT_NEAR(x.fraction[1], 0.5, 1e-9);
  EXPECT_THROW(finish_time_fair_allocation({{0, 100, 0, 1}}, 1), std::invalid_argument);
}

// Rounds realise the fractions by priority x / received: a (x = 0.618) has received all its time so
// far (priority 0.618), b never ran (infinite priority) and takes the only GPU.
TEST(GavelFtf, ServesTheHighestFractionOverReceived) {
  const Cluster cluster = cluster_of(1, 1);
  FakeApp a(0, 1, 100), b(1, 1, 0);
  a.set_terms({100, 100, 200, 1});
  b.set_terms({0, 100, 200, 1});
  Rng rng(1);
  auto out = granted(make_policy("gavel-ftf")->run_round(round_of(cluster, 100, {0}, {}, {&a, &b}), rng));
  EXPECT_EQ(out[1], (std::vector<GpuIndex>{0}));
  // Both served before: a received 100 of 100 s (priority 0.618), b 10 of 50 s (0.382 / 0.2 = 1.9).
  FakeApp a2(0, 1, 100), b2(1, 1, 10);
  a2.set_terms({100, 100, 200, 1});
  b2.set_terms({50, 100, 200, 1});
  out = granted(make_policy("gavel-ftf")->run_round(round_of(cluster, 100, {0}, {}, {&a2, &b2}), rng));
  EXPECT_EQ(out.count(0), 0u);
  EXPECT_EQ(out[1], (std::vector<GpuIndex>{0}));
}

}  // namespace
}  // namespace themis::arbiter::policies
