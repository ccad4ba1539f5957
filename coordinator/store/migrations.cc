#include "coordinator/store/migrations.h"

namespace themis::store {

namespace {

// Times are unix seconds (REAL, millisecond precision: tests run leases of a few seconds).
const char* const kVersion1 = R"sql(
CREATE TABLE hosts (
  id             INTEGER PRIMARY KEY,
  name           TEXT NOT NULL UNIQUE,
  rack           TEXT NOT NULL,
  state          TEXT NOT NULL CHECK (state IN ('up', 'down')),
  first_gpu      INTEGER NOT NULL,
  gpu_count      INTEGER NOT NULL CHECK (gpu_count > 0),
  registered_at  REAL NOT NULL,
  last_heartbeat REAL NOT NULL
);

CREATE TABLE gpus (
  gpu         INTEGER PRIMARY KEY,              -- cluster-wide GpuIndex
  host_id     INTEGER NOT NULL REFERENCES hosts(id),
  local_index INTEGER NOT NULL,                 -- CUDA device number on its host
  slot        INTEGER NOT NULL,                 -- cluster-wide slot number
  model       TEXT NOT NULL DEFAULT '',
  UNIQUE (host_id, local_index)
);

CREATE TABLE apps (
  id                  INTEGER PRIMARY KEY,
  name                TEXT NOT NULL,
  owner               TEXT NOT NULL,            -- principal that submitted it
  state               TEXT NOT NULL CHECK (state IN ('PENDING','RUNNING','COMPLETED','FAILED','CANCELLED')),
  spec                TEXT NOT NULL,            -- the submitted spec, verbatim
  gpus_per_job        INTEGER NOT NULL CHECK (gpus_per_job > 0),
  max_concurrent_jobs INTEGER NOT NULL CHECK (max_concurrent_jobs > 0),
  workdir             TEXT NOT NULL DEFAULT '',
  env                 TEXT NOT NULL DEFAULT '{}', -- JSON object
  checkpoint_dir      TEXT NOT NULL DEFAULT '',
  grace_ms            INTEGER NOT NULL DEFAULT 10000,
  rho                 REAL,                     -- current finish-time fairness, as of the last round
  submitted_at        REAL NOT NULL,
  finished_at         REAL
);

CREATE TABLE jobs (
  app_id       INTEGER NOT NULL REFERENCES apps(id),
  job          INTEGER NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('PENDING','STARTING','RUNNING','STOPPING','COMPLETED','FAILED','CANCELLED')),
  reason       TEXT NOT NULL DEFAULT 'New',     -- why PENDING, or why it ended
  attempt      INTEGER NOT NULL DEFAULT 0,
  hparams      TEXT NOT NULL DEFAULT '{}',      -- JSON object
  command      TEXT NOT NULL,                   -- JSON array, placeholders expanded
  placement    TEXT NOT NULL DEFAULT '[]',      -- JSON array of GpuIndex of the current attempt
  exited_ranks INTEGER NOT NULL DEFAULT 0,
  exit_code    INTEGER,
  exit_signal  INTEGER,
  log_tail     TEXT,
  state_since  REAL NOT NULL,
  PRIMARY KEY (app_id, job)
);

CREATE TABLE rounds (
  id          INTEGER PRIMARY KEY,
  started_at  REAL NOT NULL,
  finished_at REAL NOT NULL,
  trigger     TEXT NOT NULL,                    -- what made GPUs available
  policy      TEXT NOT NULL,
  free_gpus   INTEGER NOT NULL,
  apps        INTEGER NOT NULL,                 -- active apps considered
  offered_to  TEXT NOT NULL DEFAULT '[]',       -- JSON array of app ids (the Themis filter)
  granted     INTEGER NOT NULL,                 -- GPUs leased this round
  idle        INTEGER NOT NULL,                 -- free GPUs left idle
  outcome     TEXT NOT NULL                     -- JSON: grants, idle reasons, auction record
);

CREATE TABLE bids (
  round_id   INTEGER NOT NULL REFERENCES rounds(id),
  app_id     INTEGER NOT NULL REFERENCES apps(id),
  rho_before REAL,                              -- the app's current ρ when the round ran
  rho_no_new REAL,                              -- NULL: the app did not bid
  bid_rows   TEXT NOT NULL DEFAULT '[]',        -- JSON [{gpus:[..], rho:..}]
  won        TEXT NOT NULL DEFAULT '[]',        -- JSON array of GpuIndex granted
  grant_kind TEXT,                              -- auction | leftover | direct | NULL
  PRIMARY KEY (round_id, app_id)
);

CREATE TABLE leases (
  id             INTEGER PRIMARY KEY,
  gpu            INTEGER NOT NULL REFERENCES gpus(gpu),
  app_id         INTEGER NOT NULL,
  job            INTEGER NOT NULL,
  round_id       INTEGER NOT NULL REFERENCES rounds(id),
  start          REAL NOT NULL,
  expiry         REAL NOT NULL,
  state          TEXT NOT NULL CHECK (state IN ('active', 'released', 'expired')),
  released_at    REAL,
  release_reason TEXT,
  FOREIGN KEY (app_id, job) REFERENCES jobs(app_id, job)
);
CREATE UNIQUE INDEX leases_one_active_per_gpu ON leases(gpu) WHERE state = 'active';
CREATE INDEX leases_by_app ON leases(app_id, job);

CREATE TABLE events (
  id       INTEGER PRIMARY KEY,
  ts       REAL NOT NULL,
  kind     TEXT NOT NULL,
  app_id   INTEGER,
  job      INTEGER,
  host     TEXT,
  round_id INTEGER,
  message  TEXT NOT NULL
);
CREATE INDEX events_by_app ON events(app_id, id);
CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;

-- Admin views: stable names and columns (docs/admin.md). Times are ISO 8601 UTC.
CREATE VIEW leases_active AS
SELECT l.id AS lease_id, l.gpu, h.name AS host, g.local_index, h.rack, l.app_id AS app, a.name AS app_name,
       a.owner, l.job, l.round_id AS round,
       strftime('%Y-%m-%dT%H:%M:%SZ', l.start, 'unixepoch') AS start,
       strftime('%Y-%m-%dT%H:%M:%SZ', l.expiry, 'unixepoch') AS expiry,
       l.start AS start_ts, l.expiry AS expiry_ts
FROM leases l JOIN gpus g ON g.gpu = l.gpu JOIN hosts h ON h.id = g.host_id JOIN apps a ON a.id = l.app_id
WHERE l.state = 'active';

CREATE VIEW apps_rho AS
SELECT a.id AS app, a.name, a.owner, a.state, a.rho,
       (SELECT count(*) FROM leases l WHERE l.app_id = a.id AND l.state = 'active') AS gpus_held,
       (SELECT count(*) FROM jobs j WHERE j.app_id = a.id) AS jobs,
       (SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state IN ('STARTING','RUNNING','STOPPING')) AS jobs_running,
       (SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state = 'PENDING') AS jobs_pending,
       (SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state IN ('COMPLETED','FAILED','CANCELLED')) AS jobs_done,
       strftime('%Y-%m-%dT%H:%M:%SZ', a.submitted_at, 'unixepoch') AS submitted
FROM apps a;

CREATE VIEW rounds_recent AS
SELECT r.id AS round, strftime('%Y-%m-%dT%H:%M:%SZ', r.started_at, 'unixepoch') AS started,
       CAST(round((r.finished_at - r.started_at) * 1000.0) AS INTEGER) AS duration_ms,
       r.trigger, r.policy, r.free_gpus, r.apps, r.granted, r.idle,
       CASE WHEN r.granted = 0 THEN 'idle' WHEN r.idle = 0 THEN 'all granted' ELSE 'partly granted' END AS outcome
FROM rounds r ORDER BY r.id DESC LIMIT 100;

CREATE VIEW gpu_utilisation AS
SELECT h.name AS host, h.rack, h.state, count(g.gpu) AS gpus,
       count(l.id) AS allocated,
       round(CAST(count(l.id) AS REAL) / count(g.gpu), 3) AS utilisation
FROM hosts h JOIN gpus g ON g.host_id = h.id
LEFT JOIN leases l ON l.gpu = g.gpu AND l.state = 'active'
GROUP BY h.id ORDER BY h.name;
)sql";


// Failed jobs and admission control (docs/reliability.md).
const char* const kVersion2 = R"sql(
ALTER TABLE apps ADD COLUMN admission TEXT;     -- NULL: admitted; else why it waits ("queued: admission (...)")
ALTER TABLE jobs ADD COLUMN retry_at REAL;      -- PENDING after a failure: not placed before this time
ALTER TABLE jobs ADD COLUMN failure TEXT;       -- "class: reason" of the last failed attempt
CREATE INDEX jobs_in_backoff ON jobs(retry_at) WHERE retry_at IS NOT NULL;

CREATE TABLE job_failures (
  id          INTEGER PRIMARY KEY,
  app_id      INTEGER NOT NULL,
  job         INTEGER NOT NULL,
  attempt     INTEGER NOT NULL,
  ts          REAL NOT NULL,
  class       TEXT NOT NULL CHECK (class IN ('user_error','out_of_memory','communication','node_failure','preemption','other')),
  exit_code   INTEGER,
  exit_signal INTEGER,
  reason      TEXT NOT NULL,                    -- what was seen: exit status and the matching log line
  decision    TEXT NOT NULL CHECK (decision IN ('retry','failed','resume','launcher')),
  retry_at    REAL,                             -- decision 'retry': end of the back-off
  summary     TEXT NOT NULL DEFAULT '',         -- e.g. "retry 2 of 3 after 20 s back-off"
  FOREIGN KEY (app_id, job) REFERENCES jobs(app_id, job)
);
CREATE INDEX job_failures_by_job ON job_failures(app_id, job, attempt);

-- Same columns as before plus reason; an app waiting for admission shows as QUEUED.
DROP VIEW apps_rho;
CREATE VIEW apps_rho AS
SELECT a.id AS app, a.name, a.owner,
       CASE WHEN a.state = 'PENDING' AND a.admission IS NOT NULL THEN 'QUEUED' ELSE a.state END AS state, a.rho,
       (SELECT count(*) FROM leases l WHERE l.app_id = a.id AND l.state = 'active') AS gpus_held,
       (SELECT count(*) FROM jobs j WHERE j.app_id = a.id) AS jobs,
       (SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state IN ('STARTING','RUNNING','STOPPING')) AS jobs_running,
       (SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state = 'PENDING') AS jobs_pending,
       (SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state IN ('COMPLETED','FAILED','CANCELLED')) AS jobs_done,
       strftime('%Y-%m-%dT%H:%M:%SZ', a.submitted_at, 'unixepoch') AS submitted,
       a.admission AS reason
FROM apps a;
)sql";

// Round timing, measured in the coordinator's loop (docs/admin.md "Round timing"), unix seconds.
const char* const kVersion3 = R"sql(
ALTER TABLE rounds ADD COLUMN event_at REAL;            -- the resource event: earliest expiry among the leases it re-auctions, else when the trigger was noticed
ALTER TABLE rounds ADD COLUMN offers_sent_at REAL;      -- offers handed to ZeroMQ (NULL: no launcher was offered GPUs)
ALTER TABLE rounds ADD COLUMN auction_started_at REAL;  -- the policy's round began (bids in, or the offer deadline passed)
ALTER TABLE rounds ADD COLUMN auction_finished_at REAL; -- the policy's round returned
ALTER TABLE rounds ADD COLUMN committed_at REAL;        -- the round's transaction committed
ALTER TABLE rounds ADD COLUMN grants_sent_at REAL;      -- every launcher's grant handed to ZeroMQ
)sql";

// The first-iteration probe (docs/reliability.md "Probe"): a new app's first job tried on one GPU before it
// competes for many. NULL: not probed; waiting -> running -> passed | failed.
const char* const kVersion4 = R"sql(
ALTER TABLE apps ADD COLUMN probe TEXT CHECK (probe IN ('waiting', 'running', 'passed', 'failed'));
)sql";

// Idempotent submit (docs/reliability.md "Load"): the client's token, unique per owner, so a retried
// Submit finds the app the first one made. NULL: submitted without a token (never deduplicated).
const char* const kVersion5 = R"sql(
ALTER TABLE apps ADD COLUMN submit_token TEXT;
CREATE UNIQUE INDEX apps_by_submit_token ON apps(owner, submit_token) WHERE submit_token IS NOT NULL;
)sql";

// Loop health (docs/admin.md "Loop health"): the longest turn of the coordinator's loop since the previous
// round, in milliseconds, the turn that ran this round included up to its commit. NULL: recorded before
// schema 6. rounds_recent keeps its columns and appends it.
const char* const kVersion6 = R"sql(
ALTER TABLE rounds ADD COLUMN worst_loop_lag_ms REAL;
DROP VIEW rounds_recent;
CREATE VIEW rounds_recent AS
SELECT r.id AS round, strftime('%Y-%m-%dT%H:%M:%SZ', r.started_at, 'unixepoch') AS started,
       CAST(round((r.finished_at - r.started_at) * 1000.0) AS INTEGER) AS duration_ms,
       r.trigger, r.policy, r.free_gpus, r.apps, r.granted, r.idle,
       CASE WHEN r.granted = 0 THEN 'idle' WHEN r.idle = 0 THEN 'all granted' ELSE 'partly granted' END AS outcome,
       CAST(round(r.worst_loop_lag_ms) AS INTEGER) AS worst_loop_lag_ms
FROM rounds r ORDER BY r.id DESC LIMIT 100;
)sql";

// What each round was planned on and what it decided (docs/planner.md, "Recorded rounds"): replaying
// a record through the round planner gives the same plan.
const char* const kVersion7 = R"sql(
CREATE TABLE round_records (
  round_id  INTEGER PRIMARY KEY REFERENCES rounds(id),
  opened    TEXT NOT NULL,   -- JSON: the snapshot the round opened on
  rng_state TEXT NOT NULL,   -- JSON: the policy's random state before the auction
  settled   TEXT NOT NULL,   -- JSON: the snapshot the outcome was settled on
  plan      TEXT NOT NULL    -- JSON: the plan applied
);
)sql";

// Event kinds are CamelCase, one table of them (store/event_kinds.h): rows written under the old names of
// app and job ends (AppCOMPLETED, FAILED, ...) take the new ones. The append-only trigger is lifted for it.
const char* const kVersion8 = R"sql(
DROP TRIGGER events_no_update;
UPDATE events SET kind = CASE kind
  WHEN 'AppCOMPLETED' THEN 'AppCompleted' WHEN 'AppFAILED' THEN 'AppFailed' WHEN 'AppCANCELLED' THEN 'AppCancelled'
  WHEN 'COMPLETED' THEN 'Completed' WHEN 'FAILED' THEN 'Failed' WHEN 'CANCELLED' THEN 'Cancelled' END
WHERE kind IN ('AppCOMPLETED', 'AppFAILED', 'AppCANCELLED', 'COMPLETED', 'FAILED', 'CANCELLED');
CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
)sql";

// Drained hosts (themisctl drain/resume, docs/admin.md): no new leases on their GPUs. gpu_utilisation keeps
// its columns and appends drain ('draining' while leases remain, then 'drained') and drain_reason.
const char* const kVersion9 = R"sql(
ALTER TABLE hosts ADD COLUMN drain_reason TEXT;   -- NULL: not drained
ALTER TABLE hosts ADD COLUMN drained_at REAL;
ALTER TABLE hosts ADD COLUMN drained_by TEXT;     -- the admin who drained it
DROP VIEW gpu_utilisation;
CREATE VIEW gpu_utilisation AS
SELECT h.name AS host, h.rack, h.state, count(g.gpu) AS gpus,
       count(l.id) AS allocated,
       round(CAST(count(l.id) AS REAL) / count(g.gpu), 3) AS utilisation,
       CASE WHEN h.drain_reason IS NULL THEN NULL WHEN count(l.id) > 0 THEN 'draining' ELSE 'drained' END AS drain,
       h.drain_reason
FROM hosts h JOIN gpus g ON g.host_id = h.id
LEFT JOIN leases l ON l.gpu = g.gpu AND l.state = 'active'
GROUP BY h.id ORDER BY h.name;
)sql";

// A launcher's launch carries environment the coordinator keeps in memory only: the keys its ranks report
// with are secret (docs/reliability.md "Launches across a coordinator restart"). After a restart, a STARTING
// attempt the launcher asked for waits until the launcher sends its launch again.
const char* const kVersion10 = R"sql(
ALTER TABLE jobs ADD COLUMN launcher_env INTEGER NOT NULL DEFAULT 0;  -- 1: its launcher sent this attempt's environment
)sql";

}  // namespace

const std::vector<std::string>& migrations() {
  static const std::vector<std::string> steps = {kVersion1, kVersion2, kVersion3, kVersion4, kVersion5, kVersion6, kVersion7, kVersion8, kVersion9, kVersion10};
  return steps;
}

}  // namespace themis::store
