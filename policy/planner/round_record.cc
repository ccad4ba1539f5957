#include "policy/planner/round_record.h"

#include <stdexcept>
#include <string>
#include <variant>

#include "core/rng.h"
#include "policy/planner/record_json.h"
#include "policy/planner/round_planner.h"

namespace themis::planner {

using nlohmann::json;
using json_read::field;
using json_read::get;

namespace {

const char* placement_name(JobPlacement p) { return p == JobPlacement::kByApp ? "app" : "coordinator"; }

JobPlacement parse_placement(const std::string& text) {
  if (text == "app") return JobPlacement::kByApp;
  if (text == "coordinator") return JobPlacement::kByCoordinator;
  throw std::invalid_argument("placement: must be \"app\" or \"coordinator\", got \"" + text + "\"");
}

const char* lease_kind_name(LeaseKind k) {
  switch (k) {
    case LeaseKind::kAuction: return "auction";
    case LeaseKind::kLeftover: return "leftover";
    case LeaseKind::kDirect: return "direct";
    case LeaseKind::kProbe: return "probe";
    case LeaseKind::kRenewal: return "renewal";
  }
  return "direct";
}

}  // namespace

json snapshot_to_json(const RoundSnapshot& s) {
  json leases = json::array();
  for (const HeldLease& l : s.leases) {
    leases.push_back({{"gpu", l.gpu}, {"app", l.app}, {"job", l.job}, {"round", l.round}, {"start", l.start}, {"expiry", l.expiry},
                      {"placement", placement_name(l.placement)}});
  }
  json apps = json::array();
  for (const AppState& a : s.apps) {
    json app = {{"id", a.id}, {"placement", placement_name(a.placement)}, {"gpus_per_job", a.gpus_per_job},
                {"free_job_slots", a.free_job_slots}, {"pending_jobs", a.pending_jobs}, {"first_job", a.first_job},
                {"probe_waiting", a.probe_waiting}};
    if (a.model) {
      app["rho"] = a.model->current_rho();
      app["demand"] = a.model->extra_demand();
      if (const auto* recorded = dynamic_cast<const RecordedAppModel*>(a.model)) {
        if (recorded->recorded_bid()) app["bid"] = bid_to_json(*recorded->recorded_bid());
        if (recorded->slowdowns()) app["slowdowns"] = *recorded->slowdowns();
        if (recorded->attained_service() > 0) app["attained_service"] = recorded->attained_service();
      }
    }
    apps.push_back(std::move(app));
  }
  json out = {{"cluster", cluster_to_json(*s.cluster)},
              {"round", s.round},
              {"now", s.now},
              {"lease_duration", s.settings.lease_duration},
              {"probe_duration", s.settings.probe_duration},
              {"batch_window", s.settings.batch_window},
              {"machine_up", s.machine_up},
              {"machine_drained", s.machine_drained},
              {"leases", leases},
              {"apps", apps}};
  if (s.reserved_probes) {
    json probes = json::array();
    for (const auto& [app, gpu] : *s.reserved_probes) probes.push_back({app, gpu});
    out["reserved_probes"] = probes;
  }
  if (s.offers_sent_at) out["offers_sent_at"] = *s.offers_sent_at;
  return out;
}

json plan_to_json(const RoundPlan& p) {
  json leases = json::array();
  for (const PlannedLease& l : p.leases) {
    leases.push_back({{"gpu", l.gpu}, {"app", l.app}, {"job", l.job}, {"start", l.start}, {"expiry", l.expiry}, {"kind", lease_kind_name(l.kind)}});
  }
  json expired = json::array();
  for (const HeldLease& l : p.expired) expired.push_back({{"gpu", l.gpu}, {"app", l.app}, {"job", l.job}, {"round", l.round}});
  json starts = json::array();
  for (const JobStart& s : p.starts) starts.push_back({{"app", s.job.app}, {"job", s.job.job}, {"gpus", s.gpus}});
  const auto refs = [](const std::vector<JobRef>& jobs) {
    json out = json::array();
    for (const JobRef& j : jobs) out.push_back({j.app, j.job});
    return out;
  };
  json lost = json::array();
  for (const auto& [app, gpu] : p.lost) lost.push_back({app, gpu});
  json probes = json::array();
  for (const auto& [app, gpu] : p.probes) probes.push_back({app, gpu});
  json idle = json::array();
  for (const arbiter::IdleGpu& i : p.idle) idle.push_back({{"gpu", i.gpu}, {"reason", i.reason}});
  return {{"round", p.round},        {"now", p.now},           {"offered", p.offered},
          {"expired", expired},      {"renewed_gpus", p.renewed_gpus}, {"leases", leases},
          {"probes", probes},        {"starts", starts},       {"renewed_jobs", refs(p.renewed_jobs)},
          {"preempted", refs(p.preempted)}, {"lost", lost},    {"idle", idle}};
}

std::unique_ptr<SnapshotRecord> snapshot_from_json(const json& j) {
  auto record = std::make_unique<SnapshotRecord>();
  record->cluster = std::make_unique<Cluster>(cluster_spec_from_json(field(j, "cluster")));
  RoundSnapshot& s = record->snapshot;
  s.cluster = record->cluster.get();
  s.round = get<RoundId>(j, "round");
  s.now = get<double>(j, "now");
  s.settings.lease_duration = get<double>(j, "lease_duration");
  s.settings.probe_duration = get<double>(j, "probe_duration");
  s.settings.batch_window = get<double>(j, "batch_window");
  s.machine_up = get<std::vector<bool>>(j, "machine_up");
  if (j.contains("machine_drained")) s.machine_drained = get<std::vector<bool>>(j, "machine_drained");  // recorded before drains: none
  for (const json& l : field(j, "leases")) {
    s.leases.push_back({get<GpuIndex>(l, "gpu"), get<AppId>(l, "app"), get<JobId>(l, "job"), get<RoundId>(l, "round"),
                        get<double>(l, "start"), get<double>(l, "expiry"), parse_placement(get<std::string>(l, "placement"))});
  }
  for (const json& a : field(j, "apps")) {
    AppState app;
    app.id = get<AppId>(a, "id");
    app.placement = parse_placement(get<std::string>(a, "placement"));
    app.gpus_per_job = get<int>(a, "gpus_per_job");
    app.free_job_slots = get<int>(a, "free_job_slots");
    app.pending_jobs = get<std::vector<JobId>>(a, "pending_jobs");
    app.first_job = get<JobId>(a, "first_job");
    app.probe_waiting = get<bool>(a, "probe_waiting");
    if (a.contains("rho")) {
      std::optional<Bid> bid;
      if (a.contains("bid")) bid = bid_from_json(app.id, a.at("bid"));
      record->models.push_back(std::make_unique<RecordedAppModel>(app.id, get<double>(a, "rho"), get<int>(a, "demand"), std::move(bid),
                                                                   app.gpus_per_job));
      if (a.contains("slowdowns")) {  // recorded before launchers reported them: none
        const auto parsed = parse_level_slowdowns(get<std::vector<double>>(a, "slowdowns"));
        if (const auto* why = std::get_if<std::string>(&parsed)) throw std::invalid_argument("app " + std::to_string(app.id) + ": " + *why);
        record->models.back()->set_slowdowns(*record->cluster, std::get<LevelSlowdowns>(parsed));
      }
      if (a.contains("attained_service")) record->models.back()->set_attained_service(get<double>(a, "attained_service"));
      app.model = record->models.back().get();
    }
    s.apps.push_back(std::move(app));
  }
  if (j.contains("reserved_probes")) {
    std::map<AppId, GpuIndex> probes;
    for (const json& p : j.at("reserved_probes")) probes[p.at(0).get<AppId>()] = p.at(1).get<GpuIndex>();
    s.reserved_probes = std::move(probes);
  }
  if (j.contains("offers_sent_at")) s.offers_sent_at = j.at("offers_sent_at").get<Seconds>();
  return record;
}

RoundPlan replay_round(const json& opened, const std::array<std::uint64_t, 4>& rng_state, const json& settled,
                       arbiter::Policy& policy) {
  const auto open = snapshot_from_json(opened);
  const auto settle = snapshot_from_json(settled);
  const RoundFrame frame = open_round(open->snapshot);
  arbiter::RoundOutcome outcome;
  if (frame.needs_policy) {
    Rng rng = Rng::from_state(rng_state);
    outcome = policy.run_round(frame.input, rng);
  }
  return settle_round(settle->snapshot, frame, std::move(outcome));
}

}  // namespace themis::planner
