#include "coordinator/explain.h"

#include "coordinator/admission_feasibility.h"
#include "coordinator/request_error.h"
#include "coordinator/store/explain_store.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "policy/arbiter/filter.h"

namespace themis::coordinator {

using nlohmann::json;

namespace {

using store::ExplainApp;
using store::ExplainJob;

// A stored value as a fact: null when it is not stored.
template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

double number(const json& v, double fallback = 0) { return v.is_number() ? v.get<double>() : fallback; }

std::string iso(double ts) {
  const auto seconds = static_cast<std::time_t>(std::floor(ts));
  const int millis = std::min(999, static_cast<int>(std::lround((ts - std::floor(ts)) * 1000.0)));
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char fraction[16];
  std::snprintf(fraction, sizeof fraction, ".%03dZ", millis);
  return std::string(buf) + fraction;
}

std::string fixed(double v, int digits = 3) {
  std::ostringstream s;
  s.precision(digits);
  s << std::fixed << v;
  return s.str();
}

std::string rho_text(const std::optional<double>& v) { return v ? fixed(*v) : "unknown"; }

std::string duration(double seconds) {
  if (seconds < 120) return fixed(seconds, 3) + " s";
  const auto total = static_cast<long long>(std::llround(seconds));
  std::ostringstream s;
  if (total >= 86400) s << total / 86400 << "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", (total / 3600) % 24, (total / 60) % 60, total % 60);
  s << buf;
  return s.str();
}

bool contains(const json& array, std::int64_t value) {
  if (!array.is_array()) return false;
  return std::any_of(array.begin(), array.end(), [&](const json& v) { return v.is_number() && v.get<std::int64_t>() == value; });
}

json parse_or(const std::string& text, json fallback) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return fallback;
  }
}

std::string last_line(const std::optional<std::string>& text) {
  if (!text) return "";
  std::string s = *text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  const auto cut = s.rfind('\n');
  return cut == std::string::npos ? s : s.substr(cut + 1);
}

std::string app_label(std::int64_t id, const std::string& name) { return "app " + std::to_string(id) + " (" + name + ")"; }

// "round 12 (2026-01-02T03:04:05Z, lease expiry)".
std::string round_label(std::int64_t round, double started_at, const std::string& trigger) {
  return "round " + std::to_string(round) + " (" + iso(started_at) + ", " + trigger + ")";
}

std::string join_texts(const std::vector<std::string>& parts) {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  return s;
}

// The auction's winners of a round (its outcome JSON), one text each.
std::vector<std::string> winner_texts(const json& outcome) {
  std::vector<std::string> winners;
  for (const auto& w : outcome.value("auction_winners", json::array())) {
    winners.push_back(w["kept"].dump() + " to app " + w["app"].dump() + " (its proportional-fair bundle " +
                      w["pf_bundle"].dump() + " at ρ " + fixed(number(w["rho"])) + ", payment factor c " +
                      fixed(number(w["c"])) + ")");
  }
  return winners;
}

// The app the round held its free GPUs for (docs/arbiter.md, "Gang reservation"), if it did.
std::optional<std::int64_t> reserved_app(const json& outcome) {
  const json r = outcome.value("reservation", json::object());
  if (!r.contains("app") || !r["app"].is_number_integer()) return std::nullopt;
  return r["app"].get<std::int64_t>();
}

// Why the round held its free GPUs, as the policy said; empty when it held none.
std::string reservation_reason(const json& outcome) {
  const auto app = reserved_app(outcome);
  if (!app) return "";
  return outcome["reservation"].value("reason", "reserved for app " + std::to_string(*app));
}

std::string leftover_sentence(const json& outcome) {
  if (const std::string reserved = reservation_reason(outcome); !reserved.empty())
    return "nothing was left over: the free GPUs were " + reserved;
  std::vector<std::string> leftovers;
  for (const auto& g : outcome.value("grants", json::array())) {
    if (g.value("kind", "") == "leftover") leftovers.push_back("app " + g["app"].dump() + " " + g["gpus"].dump());
  }
  return leftovers.empty() ? "no GPU was left over for apps outside the auction" : "the leftover went to " + join_texts(leftovers);
}

// How the filter rule narrowed the ⌈(1−f)·N⌉ worst apps (policy/arbiter/filter.h).
std::string filter_rule_words(arbiter::FilterRule filter) {
  switch (filter) {
    case arbiter::FilterRule::kFixed: return "";
    case arbiter::FilterRule::kOfferBounded: return "as many as could use them of ";
    case arbiter::FilterRule::kAdaptive:
      return "(adaptive filter: all of them when their ρ were within " +
             std::to_string(std::lround(arbiter::kAdaptiveEvenSpread * 100)) +
             "% of each other, else as many as could use them) ";
  }
  return "";
}

// The Themis filter of a round: `everyone` are its bidders, `offered_to` its app ids.
std::string offer_text(const std::vector<store::Bidder>& everyone, const json& offered_to, std::int64_t free_then,
                       std::int64_t active_apps, double fairness_knob, arbiter::FilterRule filter) {
  std::vector<std::string> offered_text;
  for (const auto& e : everyone) {
    if (contains(offered_to, e.app)) {
      offered_text.push_back("app " + std::to_string(e.app) + " (" + e.name + ", ρ " + rho_text(e.rho) + ")");
    }
  }
  const std::int64_t filter_size =
      arbiter::filter_count(static_cast<int>(active_apps), arbiter::FilterFraction::from_double(fairness_knob));
  return "the offer of " + std::to_string(free_then) + " GPUs went to " +
         filter_rule_words(filter) + "the ⌈(1−f)·N⌉ = ⌈(1−" + fixed(fairness_knob, 2) +
         ")·" + std::to_string(active_apps) + "⌉ = " + std::to_string(filter_size) +
         " app(s) with the worst ρ that wanted GPUs: " + (offered_text.empty() ? std::string("none") : join_texts(offered_text));
}

// Cluster-wide facts used by several verdicts.
struct ClusterNow : store::ClusterCounts {
  std::optional<store::LeaseExpiry> next_expiry;
};

ClusterNow cluster_now(store::ExplainStore& records) {
  ClusterNow c{records.cluster_counts(), {}};
  c.next_expiry = records.next_expiry();
  return c;
}

std::string next_expiry_text(const ClusterNow& c) {
  if (!c.next_expiry) return "no lease is active";
  return "the next lease expiry is at " + iso(c.next_expiry->expiry) + " (GPU " + std::to_string(c.next_expiry->gpu) +
         ", " + app_label(c.next_expiry->app, c.next_expiry->app_name) + ")";
}

std::string now_text(const ClusterNow& c) {
  if (c.free_gpus > 0) return "Now: " + std::to_string(c.free_gpus) + " of " + std::to_string(c.gpus_up) + " GPUs are free.";
  return "Now: all " + std::to_string(c.gpus_up) + " GPUs of the up hosts are leased; " + next_expiry_text(c) + ".";
}

struct Verdict {
  std::string reason;
  std::string headline;
  std::vector<std::string> details;
  json facts = json::object();
};

// Why the app's pending jobs did not start: admission, back-off, concurrency, then what the last
// round that considered the app decided, then the cluster as it is now.
Verdict pending_verdict(store::ExplainStore& records, const ExplainApp& app, const std::vector<ExplainJob>& jobs,
                        const ClusterNow& now_c, double now,
                        double fairness_knob, arbiter::FilterRule filter) {
  Verdict v;
  const std::int64_t id = app.id;
  const std::string label = app_label(id, app.name);
  const std::int64_t per_job = app.gpus_per_job;
  const std::int64_t max_concurrent = app.max_concurrent_jobs;
  std::int64_t pending = 0, active = 0, in_backoff = 0;
  json backoff = json::array();
  for (const auto& j : jobs) {
    const std::string& state = j.state;
    if (state == "STARTING" || state == "RUNNING" || state == "STOPPING") ++active;
    if (state != "PENDING") continue;
    ++pending;
    if (j.retry_at) {
      ++in_backoff;
      backoff.push_back({{"job", j.job}, {"retry_at", *j.retry_at}, {"failure", or_null(j.failure)}});
    }
  }
  v.facts["jobs_pending"] = pending;
  v.facts["jobs_active"] = active;
  v.facts["gpus_per_job"] = per_job;
  v.facts["free_gpus"] = now_c.free_gpus;
  v.facts["gpus_up"] = now_c.gpus_up;
  v.facts["next_expiry"] = now_c.next_expiry ? json(now_c.next_expiry->expiry) : json();

  if (app.admission && is_infeasible_reason(*app.admission)) {
    v.reason = "Infeasible";
    v.headline = label + " cannot run on this cluster: " + app.admission->substr(std::string(kInfeasiblePrefix).size()) +
                 ". It takes no GPUs and waits until hosts with enough GPUs register.";
    v.facts["admission"] = *app.admission;
    return v;
  }
  if (app.admission) {
    // Admission control writes why an app waits into apps.admission; a demand the cluster can never meet
    // is recorded there starting with "infeasible" and named Infeasible, anything else is Admission.
    const std::string why = *app.admission;
    if (why.rfind("infeasible", 0) == 0) {
      v.reason = "Infeasible";
      v.headline = label + " can never run on this cluster: " + why + ".";
      v.facts["admission"] = *app.admission;
      return v;
    }
    v.reason = "Admission";
    v.headline = label + " waits for admission: " + *app.admission + ".";
    v.facts["admission"] = *app.admission;
    return v;
  }
  if (now_c.hosts_up == 0) {
    v.reason = "NodesDown";
    v.headline = label + " is pending: no host is up, so there are no GPUs to give out.";
    return v;
  }
  if (app.probe == "waiting") {
    v.reason = "Probe";
    v.headline = label + " is pending: before it competes for GPUs, its first job runs alone on one GPU to catch a " +
                 "failure at start; it waits for a free GPU for that (" + std::to_string(now_c.free_gpus) + " free now).";
    return v;
  }
  if (pending > 0 && in_backoff == pending) {
    v.reason = "Backoff";
    const auto& first = backoff[0];
    v.headline = label + " is pending: its job " + std::to_string(id) + "_" + first["job"].dump() +
                 " waits out a retry back-off until " + iso(first["retry_at"].get<double>()) +
                 (first["retry_at"].get<double>() > now ? " (in " + duration(first["retry_at"].get<double>() - now) + ")"
                                                        : " (due now)") +
                 (first["failure"].is_string() ? " after a failure (" + first["failure"].get<std::string>() + ")" : "") + ".";
    v.facts["backoff"] = backoff;
    return v;
  }
  if (active >= max_concurrent) {
    v.reason = "AppConcurrency";
    v.headline = label + " runs " + std::to_string(active) + " jobs, its max_concurrent_jobs = " +
                 std::to_string(max_concurrent) + "; its " + std::to_string(pending) +
                 " pending jobs start when one of them ends.";
    v.facts["max_concurrent_jobs"] = max_concurrent;
    return v;
  }

  // GPUs it holds that none of its jobs runs on: a launcher app places its own jobs (LaunchJob).
  const std::vector<std::int64_t> unused = records.unused_gpus(id);
  if (static_cast<std::int64_t>(unused.size()) >= per_job) {
    json gpus = json::array();
    for (const auto gpu : unused) gpus.push_back(gpu);
    v.reason = "Launching";
    v.headline = label + " holds GPUs " + gpus.dump() + " that none of its jobs runs on yet: its launcher places its " +
                 std::to_string(pending) + " pending job(s) on them (LaunchJob).";
    v.facts["unused_gpus"] = gpus;
    return v;
  }

  const auto last = records.last_bid(id);
  if (!last) {
    if (now_c.free_gpus == 0) {
      v.reason = "Resources";
      v.headline = label + " is pending: no GPU has been free since it was submitted at " +
                   iso(app.submitted_at) + " (all " + std::to_string(now_c.gpus_up) +
                   " GPUs of the up hosts are leased), so no round has run; " + next_expiry_text(now_c) + ".";
    } else {
      v.reason = "New";
      v.headline = label + " was submitted at " + iso(app.submitted_at) +
                   " and no round has considered it yet; " + std::to_string(now_c.free_gpus) +
                   " GPUs are free, and the next round runs within the batch window.";
    }
    return v;
  }

  const store::LastBid& r = *last;
  const std::int64_t round = r.round;
  const json offered_to = parse_or(r.offered_to, json::array());
  const json outcome = parse_or(r.outcome, json::object());
  const json won = parse_or(r.won, json::array());
  const json bid_rows = parse_or(r.bid_rows, json::array());
  const bool offered = contains(offered_to, id);
  const bool bid = r.rho_no_new.has_value();
  const bool granted = r.grant_kind.has_value();
  const std::int64_t active_apps = r.apps;
  const std::int64_t free_then = r.free_gpus;
  const std::vector<store::Bidder> everyone = records.bidders(round);
  std::int64_t rank = 1;
  for (const auto& e : everyone) {
    if (e.app != id && e.rho.value_or(-1) > r.rho_before.value_or(-1)) ++rank;
  }
  const std::string round_text = round_label(round, r.started_at, r.trigger);
  v.facts["round"] = round;
  v.facts["round_started_at"] = r.started_at;
  v.facts["round_free_gpus"] = free_then;
  v.facts["round_apps"] = active_apps;
  v.facts["offered_to"] = offered_to;
  v.facts["offered"] = offered;
  v.facts["bid"] = bid;
  v.facts["rho"] = or_null(r.rho_before);
  v.facts["rho_rank"] = rank;
  v.facts["won"] = won;
  v.facts["grant_kind"] = or_null(r.grant_kind);

  // Who got what in that round.
  json grants_to_app = json::array();
  for (const auto& g : outcome.value("grants", json::array())) {
    if (g["app"].get<std::int64_t>() == id) grants_to_app = g["gpus"];
  }
  const std::vector<std::string> winners = winner_texts(outcome);
  const double f = fairness_knob;
  // The arbiter's own exact count, not a floating ceil: explain says what the round computed.
  const std::int64_t filter_size = arbiter::filter_count(static_cast<int>(active_apps), arbiter::FilterFraction::from_double(f));
  v.facts["filter_size"] = filter_size;
  v.facts["fairness_knob"] = f;
  v.facts["filter"] = std::string(arbiter::to_string(filter));
  const std::string filter_text = offer_text(everyone, offered_to, free_then, active_apps, f, filter);
  const std::string leftover_text = leftover_sentence(outcome);

  const std::string reservation = reservation_reason(outcome);
  if (reserved_app(outcome) == id) {
    v.reason = "Reserved";
    const bool lent = !outcome.value("grants", json::array()).empty();  // gang_backfill
    v.headline = label + " is pending: " + round_text + " held its " + std::to_string(free_then) + " free GPUs for it" +
                 (lent ? ", lent meanwhile to other apps on leases that end when its gang fits"
                       : ", none to any other app") +
                 " (" + reservation + ").";
  } else if (granted && won.empty()) {
    v.reason = "Placement";
    v.headline = label + " is pending: " + round_text + " granted it GPUs " + grants_to_app.dump() + " as " +
                 r.grant_kind.value_or("") + ", but its jobs need " + std::to_string(per_job) +
                 " GPUs each and none fits there, so those GPUs stayed idle.";
    v.facts["granted_gpus"] = grants_to_app;
  } else if (!won.empty()) {
    v.reason = "Resources";
    v.headline = label + " won " + won.dump() + " as " + r.grant_kind.value_or("") + " in " + round_text +
                 ", not enough for all its jobs: " + std::to_string(pending) + " job(s) still need " +
                 std::to_string(per_job) + " GPUs each.";
  } else if (offered && bid) {
    v.reason = "Outbid";
    std::string best;
    double best_rho = 0;
    for (const auto& row : bid_rows) {
      if (best.empty() || number(row["rho"]) < best_rho) {
        best_rho = number(row["rho"]);
        best = std::to_string(row["gpus"].size()) + " GPUs " + row["gpus"].dump() + " at ρ " + fixed(best_rho);
      }
    }
    v.headline = label + " bid in " + round_text + " (ρ " + rho_text(r.rho_before) + " now, " +
                 rho_text(r.rho_no_new) + " without new GPUs; " + std::to_string(bid_rows.size()) +
                 " rows, best " + (best.empty() ? std::string("none") : best) + ") and won nothing: the auction gave " +
                 (winners.empty() ? std::string("no GPUs") : join_texts(winners)) + ".";
    v.facts["bid_rows"] = bid_rows;
    v.facts["rho_no_new"] = or_null(r.rho_no_new);
    v.facts["winners"] = outcome.value("auction_winners", json::array());
  } else if (offered) {
    v.reason = "NoBid";
    v.headline = label + " was offered " + std::to_string(free_then) + " GPUs in " + round_text +
                 " (ρ " + rho_text(r.rho_before) + ", rank " + std::to_string(rank) + " of " + std::to_string(active_apps) +
                 ") but no bid arrived (no launcher attached, or its bid missed the deadline), so it only shares the "
                 "leftover, and " + leftover_text + ".";
  } else {
    v.reason = "Fairness";
    v.headline = label + " was not offered GPUs in " + round_text + ": its ρ " + rho_text(r.rho_before) +
                 " ranked " + std::to_string(rank) + " of " + std::to_string(active_apps) + ", and " + filter_text +
                 ". Outside the auction it shares the leftover, and " + leftover_text + ".";
  }
  if (!winners.empty() && v.reason != "Outbid") v.details.push_back("The auction in round " + std::to_string(round) + " gave " + join_texts(winners) + ".");
  if (v.reason == "Outbid" || v.reason == "NoBid") v.details.push_back("In round " + std::to_string(round) + ", " + filter_text + ".");
  if (v.reason == "Outbid") v.details.push_back("Leftover: " + leftover_text + ".");
  v.details.push_back(now_text(now_c));
  return v;
}

Verdict running_verdict(store::ExplainStore& records, const ExplainApp& app, const std::vector<ExplainJob>& jobs,
                        const ClusterNow& now_c, double now,
                        double fairness_knob, arbiter::FilterRule filter) {
  Verdict v;
  v.reason = "Running";
  const std::int64_t id = app.id;
  const std::string label = app_label(id, app.name);
  if (app.probe == "running") {
    v.details.push_back("Probing: its first job runs alone on one GPU until it exits or its probe lease expires; then the app competes for more.");
  }
  const std::vector<store::HeldLease> held = records.held_leases(id);
  json gpus = json::array();
  std::vector<std::string> hosts;
  double first_expiry = 0, last_expiry = 0;
  for (const auto& l : held) {
    gpus.push_back(l.gpu);
    const std::string& host = l.host;
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
    const double e = l.expiry;
    first_expiry = first_expiry == 0 ? e : std::min(first_expiry, e);
    last_expiry = std::max(last_expiry, e);
  }
  std::int64_t running = 0, pending = 0;
  for (const auto& j : jobs) {
    const std::string& state = j.state;
    if (state == "STARTING" || state == "RUNNING" || state == "STOPPING") ++running;
    if (state == "PENDING") ++pending;
  }
  std::string host_list;
  for (std::size_t i = 0; i < hosts.size(); ++i) host_list += (i ? ", " : "") + hosts[i];
  v.headline = label + " is RUNNING: it holds " + std::to_string(gpus.size()) + " GPUs " + gpus.dump() +
               (hosts.empty() ? std::string() : " on " + host_list) + "; " + std::to_string(running) + " job(s) running, " +
               std::to_string(pending) + " pending; ρ " + rho_text(app.rho) + ".";
  v.facts["gpus"] = gpus;
  v.facts["hosts"] = hosts;
  v.facts["rho"] = or_null(app.rho);
  v.facts["jobs_running"] = running;
  v.facts["jobs_pending"] = pending;
  if (!held.empty()) {
    v.facts["first_expiry"] = first_expiry;
    v.facts["last_expiry"] = last_expiry;
  }
  const auto won = records.last_win(id);
  if (won) {
    v.details.push_back("Last won " + won->won + " as " + won->grant_kind.value_or("") + " in round " +
                        std::to_string(won->round) + " (" + iso(won->started_at) + ", " + won->trigger + ").");
    v.facts["won_round"] = won->round;
    v.facts["won_gpus"] = parse_or(won->won, json::array());
    v.facts["grant_kind"] = or_null(won->grant_kind);
  }
  if (!held.empty()) {
    v.details.push_back("Its leases expire " +
                        (first_expiry == last_expiry ? "at " + iso(first_expiry)
                                                     : "between " + iso(first_expiry) + " and " + iso(last_expiry)) +
                        "; at expiry the GPUs go to auction again and it keeps them only if it wins them back.");
  }
  for (const auto& j : jobs) {
    const std::string& state = j.state;
    if (state == "STARTING" || state == "RUNNING" || state == "STOPPING") {
      v.details.push_back("Job " + std::to_string(id) + "_" + std::to_string(j.job) + " " + state + " (attempt " +
                          std::to_string(j.attempt) + ") on GPUs " + j.placement + ".");
    }
  }
  if (pending > 0) {
    const Verdict p = pending_verdict(records, app, jobs, now_c, now, fairness_knob, filter);
    v.details.push_back("Pending jobs (" + p.reason + "): " + p.headline);
    v.facts["pending_reason"] = p.reason;
  }
  return v;
}

Verdict finished_verdict(store::ExplainStore& records, const ExplainApp& app, const std::vector<ExplainJob>& jobs) {
  Verdict v;
  const std::int64_t id = app.id;
  const std::string& state = app.state;
  const std::string label = app_label(id, app.name);
  v.reason = state == "COMPLETED" ? "Completed" : state == "FAILED" ? "Failed" : "Cancelled";
  if (app.probe == "failed") {
    v.details.push_back("Its first job failed while it ran alone on one GPU (its probe), so the app failed before it competed "
                        "for GPUs; jobs that had not run were cancelled.");
  }
  const double submitted = app.submitted_at;
  const double finished = app.finished_at.value_or(submitted);
  const double jct = finished - submitted;
  const double gpu_seconds = records.lease_use(id).gpu_seconds;
  const auto last_round = records.last_bid_round(id);
  std::int64_t completed = 0, failed = 0, cancelled = 0;
  for (const auto& j : jobs) {
    const std::string& s = j.state;
    completed += s == "COMPLETED";
    failed += s == "FAILED";
    cancelled += s == "CANCELLED";
  }
  v.headline = label + " " + state + " at " + iso(finished) + ", " + duration(jct) + " after its submission at " +
               iso(submitted) + " (JCT " + fixed(jct) + " s); last ρ " + rho_text(app.rho) +
               (last_round ? " (round " + std::to_string(*last_round) + ")" : "") +
               "; jobs: " + std::to_string(completed) + " completed, " + std::to_string(failed) + " failed, " +
               std::to_string(cancelled) + " cancelled; " + fixed(gpu_seconds, 1) + " GPU-seconds leased.";
  v.facts["finished_at"] = finished;
  v.facts["submitted_at"] = submitted;
  v.facts["jct_seconds"] = jct;
  v.facts["rho"] = or_null(app.rho);
  v.facts["gpu_seconds"] = gpu_seconds;
  json statuses = json::array();
  for (const auto& j : jobs) {
    const std::string& s = j.state;
    const std::string job = std::to_string(id) + "_" + std::to_string(j.job);
    statuses.push_back({{"job", j.job}, {"state", s}, {"reason", j.reason}, {"attempt", j.attempt},
                        {"exit_code", or_null(j.exit_code)}, {"exit_signal", or_null(j.exit_signal)}});
    std::string line = "Job " + job + " " + s + " (" + j.reason + ", attempt " + std::to_string(j.attempt) + ")";
    if (j.exit_code || j.exit_signal) {
      line += ": exit " + (j.exit_code ? std::to_string(*j.exit_code) : std::string("-")) + ", signal " +
              (j.exit_signal ? std::to_string(*j.exit_signal) : std::string("-"));
    } else if (s == "COMPLETED" || s == "CANCELLED") {
      line += j.attempt == 0 ? ": never started" : "";
    }
    if (s == "FAILED") {
      const std::string tail = last_line(j.log_tail);
      if (!tail.empty()) line += "; last line: " + tail;
    }
    if (j.failure) line += "; failure: " + *j.failure;
    v.details.push_back(line + ".");
  }
  v.facts["jobs"] = statuses;
  return v;
}

}  // namespace

json explain_app(store::Database& db, std::int64_t app_id, double now, double fairness_knob, arbiter::FilterRule filter) {
  store::ExplainStore records(db);
  const auto app = records.app(app_id);
  if (!app) throw not_found("app " + std::to_string(app_id));
  const std::vector<ExplainJob> jobs = records.jobs(app_id);
  const ClusterNow cluster = cluster_now(records);
  const std::string state = app->state;
  Verdict v;
  std::string shown_state = state;
  if (state == "PENDING") {
    v = pending_verdict(records, *app, jobs, cluster, now, fairness_knob, filter);
    if (v.reason == "Admission" || v.reason == "Infeasible") shown_state = "QUEUED";
  } else if (state == "RUNNING") {
    v = running_verdict(records, *app, jobs, cluster, now, fairness_knob, filter);
  } else {
    v = finished_verdict(records, *app, jobs);
  }
  return {{"state", shown_state}, {"reason", v.reason}, {"headline", v.headline}, {"details", v.details}, {"facts", v.facts}};
}

json explain_round(store::Database& db, std::int64_t round_id, double fairness_knob, arbiter::FilterRule filter) {
  store::ExplainStore records(db);
  const auto r = records.round(round_id);
  if (!r) throw not_found("round " + std::to_string(round_id));
  const json offered_to = parse_or(r->offered_to, json::array());
  const json outcome = parse_or(r->outcome, json::object());
  const std::vector<store::Bidder> everyone = records.bidders(round_id);
  const std::int64_t free_then = r->free_gpus;
  const std::int64_t granted = r->granted;
  const std::int64_t idle = r->idle;
  const std::int64_t active_apps = r->apps;
  std::string headline = round_label(round_id, r->started_at, r->trigger) + ": " + std::to_string(free_then) + " GPU(s) offered, " +
                         std::to_string(active_apps) + " active app(s); " + std::to_string(granted) + " GPU(s) granted, " +
                         std::to_string(idle) + " left idle.";
  std::vector<std::string> details;
  if (!offered_to.empty()) {
    std::string text = offer_text(everyone, offered_to, free_then, active_apps, fairness_knob, filter);
    text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    details.push_back(text + ".");
  }
  const std::vector<std::string> winners = winner_texts(outcome);
  if (!winners.empty()) details.push_back("The auction gave " + join_texts(winners) + ".");
  std::vector<std::string> grants;
  for (const auto& g : outcome.value("grants", json::array())) {
    grants.push_back("app " + g["app"].dump() + " " + g["gpus"].dump() + " (" + g.value("kind", std::string("?")) + ")");
  }
  if (!grants.empty()) details.push_back("Grants: " + join_texts(grants) + ".");
  details.push_back("Leftover: " + leftover_sentence(outcome) + ".");
  std::vector<std::string> idle_reasons;
  for (const auto& i : outcome.value("idle", json::array())) {
    idle_reasons.push_back("GPU " + i["gpu"].dump() + ": " + i.value("reason", std::string("?")));
  }
  if (!idle_reasons.empty()) details.push_back("Idle: " + join_texts(idle_reasons) + ".");
  if (outcome.contains("auction_gap")) {
    details.push_back("The auction's proven relative gap: " + fixed(number(outcome["auction_gap"]), 4) + ".");
  }
  return {{"round", round_id}, {"headline", headline}, {"details", details}};
}

std::string list_reason(const json& verdict) {
  const std::string state = verdict.value("state", "");
  if (state == "PENDING" || state == "QUEUED") return verdict.value("reason", "");
  if (state == "RUNNING") {
    const auto& facts = verdict.value("facts", json::object());
    if (facts.contains("pending_reason") && facts["pending_reason"].is_string()) return facts["pending_reason"].get<std::string>();
  }
  return "";
}

}  // namespace themis::coordinator
