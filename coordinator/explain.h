#pragma once
// The answer to `themisctl explain APP`: why an app is in its state, read from the database alone
// (rounds, bids, leases, jobs), so it says what the coordinator actually decided.
//
// The verdict is a JSON object:
//   state     the app's state (PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, or QUEUED for admission)
//   reason    one word: New, Resources, Fairness, Outbid, NoBid, Placement, Reserved, AppConcurrency, Launching,
//             Backoff, Admission, Infeasible, NodesDown, Probe (pending); Running; Completed, Failed, Cancelled (finished)
//   headline  one sentence with the facts behind the reason
//   details   further lines (the round's offer, winners, leftover, lease expiries, exit statuses)
//   facts     the same facts as values, for scripts and tests (times in unix seconds)
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "coordinator/store/database.h"
#include "policy/arbiter/filter.h"

namespace themis::coordinator {

// `fairness_knob` is the coordinator's Themis f: the offer goes to ⌈(1−f)·N⌉ of N active apps, narrowed
// by `filter` (its `filter` setting, policy/arbiter/filter.h).
// Throws std::runtime_error("not found: ...") for an unknown app.
nlohmann::json explain_app(store::Database& db, std::int64_t app, double now, double fairness_knob, arbiter::FilterRule filter);

// A round in words, for the dashboard: {round, headline, details}, with the same phrases as explain_app
// (the Themis filter, the auction's winners, the leftover). Throws std::runtime_error("not found: ...").
nlohmann::json explain_round(store::Database& db, std::int64_t round, double fairness_knob, arbiter::FilterRule filter);
// The REASON `themisctl apps` shows, taken from explain_app's verdict so that both say the same: the
// verdict's reason for a pending or queued app, the reason its pending jobs wait for a running app with
// pending jobs, and "" otherwise (running with nothing pending, finished).
std::string list_reason(const nlohmann::json& verdict);

}  // namespace themis::coordinator
