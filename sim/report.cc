#include "sim/report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace themis::sim {
namespace {

using nlohmann::ordered_json;

// Rounded to 6 significant digits so the output is stable and readable.
double r6(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return std::strtod(buf, nullptr);
}

ordered_json summary_object(const RunSummary& s) {
  ordered_json j;
  j["apps"] = s.apps;
  j["finished"] = s.finished;
  j["max_rho"] = r6(s.max_rho);
  j["median_rho"] = r6(s.median_rho);
  j["jain_rho"] = r6(s.jain_rho);
  j["frac_rho_gt_1"] = r6(s.frac_rho_gt_1);
  j["gpu_time"] = r6(s.gpu_time);
  j["makespan"] = r6(s.makespan);
  j["avg_jct"] = r6(s.avg_jct);
  j["avg_placement_score"] = r6(s.avg_placement_score);
  j["demand_ratio"] = r6(s.demand_ratio);
  j["peak_demand_ratio"] = r6(s.peak_demand_ratio);
  if (s.liar_jct >= 0) {
    j["liar_jct"] = r6(s.liar_jct);
    j["others_avg_jct"] = r6(s.others_avg_jct);
    if (s.others_gained_more >= 0) {
      j["others_gained_more"] = r6(s.others_gained_more);
      j["others_median_abs_change"] = r6(s.others_median_abs_change);
    }
  }
  ordered_json cdf = ordered_json::array();
  for (double v : s.rho_sorted) cdf.push_back(r6(v));
  j["rho_cdf"] = std::move(cdf);
  j["events"] = s.stats.events;
  j["rounds"] = s.stats.rounds;
  j["granted_gpus"] = s.stats.granted_gpus;
  j["leftover_gpus"] = s.stats.leftover_gpus;
  j["unused_grant_gpus"] = s.stats.unused_grant_gpus;
  j["auctions"] = s.stats.auctions;
  j["auction_offered_gpus"] = s.stats.auction_offered_gpus;
  j["auctions_worst_bidder_won_nothing"] = s.stats.auctions_worst_bidder_won_nothing;
  j["auctions_unproven"] = s.stats.auctions_unproven;
  j["max_auction_gap"] = r6(s.stats.max_auction_gap);
  return j;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string summary_json_object(const RunSummary& summary) { return summary_object(summary).dump(); }

std::string run_json(const SimResult& result, const RunSummary& summary) {
  ordered_json j;
  j["policy"] = result.policy;
  j["summary"] = summary_object(summary);
  ordered_json apps = ordered_json::array();
  for (const AppResult& a : result.apps) {
    ordered_json o;
    o["name"] = a.name;
    o["arrival"] = r6(a.arrival);
    o["finished"] = a.finished;
    o["jct"] = r6(a.jct);
    o["rho"] = r6(a.rho);
    o["t_id"] = r6(a.t_id);
    o["n_avg"] = r6(a.n_avg);
    o["gpu_time"] = r6(a.gpu_time);
    o["placement_score"] = r6(a.placement_score);
    apps.push_back(std::move(o));
  }
  j["apps"] = std::move(apps);
  return j.dump(2) + "\n";
}

std::string run_table(const SimResult& result, const RunSummary& s) {
  std::string out = "policy " + result.policy + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-24s %10s %12s %8s %12s %9s\n", "app", "arrival_s", "jct_s", "rho",
                "gpu_time_s", "placement");
  out += line;
  for (const AppResult& a : result.apps) {
    std::snprintf(line, sizeof line, "%-24s %10.0f %12.1f %8.3f %12.1f %9.3f%s\n", a.name.c_str(), a.arrival,
                  a.jct, a.rho, a.gpu_time, a.placement_score, a.finished ? "" : "  (unfinished)");
    out += line;
  }
  out += "max rho " + fmt("%.3f", s.max_rho) + ", median rho " + fmt("%.3f", s.median_rho) + ", Jain " +
         fmt("%.3f", s.jain_rho) + ", rho>1 " + fmt("%.1f%%", 100 * s.frac_rho_gt_1) + "\n";
  out += "GPU time " + fmt("%.1f", s.gpu_time / 3600) + " GPU-h, makespan " + fmt("%.1f", s.makespan / 3600) +
         " h, avg JCT " + fmt("%.2f", s.avg_jct / 3600) + " h, " + std::to_string(s.stats.events) + " events, " +
         std::to_string(s.stats.rounds) + " rounds\n";
  return out;
}

std::string compare_json(const std::vector<RunSummary>& summaries) {
  ordered_json j;
  ordered_json policies;
  for (const RunSummary& s : summaries) policies[s.policy] = summary_object(s);
  j["policies"] = std::move(policies);
  return j.dump(2) + "\n";
}

std::string compare_table(const std::vector<RunSummary>& summaries) {
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %8s %8s %6s %7s %11s %10s %10s %9s %7s\n", "policy", "max_rho", "med_rho",
                "jain", "rho>1", "gpu_time_h", "makespan_h", "avg_jct_h", "placement", "demand");
  std::string out = line;
  for (const RunSummary& s : summaries) {
    std::snprintf(line, sizeof line, "%-16s %8.3f %8.3f %6.3f %6.1f%% %11.1f %10.1f %10.2f %9.3f %7.2f\n",
                  s.policy.c_str(), s.max_rho, s.median_rho, s.jain_rho, 100 * s.frac_rho_gt_1, s.gpu_time / 3600,
                  s.makespan / 3600, s.avg_jct / 3600, s.avg_placement_score, s.demand_ratio);
    out += line;
  }
  return out;
}

}  // namespace themis::sim
