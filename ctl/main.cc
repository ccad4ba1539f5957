// themisctl: the themis command-line client. Exit codes (docs/admin.md "Errors and exit codes") are listed in --help.
#include <sqlite3.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <optional>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "core/closest_name.h"
#include "ctl/command_line.h"
#include "ctl/list_filter.h"
#include "ctl/table.h"
#include "net/curve_keys.h"
#include "net/endpoint.h"
#include "net/request_client.h"

namespace {

using nlohmann::json;
using themis::ctl::cell;
using themis::ctl::OutputFormat;
constexpr int kOk = 0, kError = 1, kUsage = 2, kBadSpec = 65, kUnreachable = 69, kDenied = 77, kConfig = 78,
              kNotFound = 102;

struct Options {
  std::string coordinator = "tcp://127.0.0.1:7310";
  std::string key;         // own .key_secret
  std::string server_key;  // coordinator .key
  bool insecure = false;
  OutputFormat output = OutputFormat::kTable;
  int timeout_ms = 5000;
};

struct Failure {
  int code;
  std::string message;
};

std::unique_ptr<themis::net::RequestClient> open_client(const Options& o) {
  themis::net::ClientOptions client;
  try {
    client.endpoint = themis::net::normalize_endpoint(o.coordinator);
  } catch (const std::invalid_argument& e) {
    throw Failure{kUsage, std::string("--coordinator: ") + e.what()};
  }
  client.insecure = o.insecure;
  client.timeout = std::chrono::milliseconds(o.timeout_ms);
  if (!o.insecure) {
    if (o.key.empty() || o.server_key.empty()) throw Failure{kConfig, "need --key and --server-key (or THEMIS_KEY and THEMIS_SERVER_KEY), or --insecure"};
    try {
      client.own_keys = themis::net::read_certificate(o.key);
      client.server_public_key = themis::net::read_certificate(o.server_key).public_key;
    } catch (const std::exception& e) {
      throw Failure{kConfig, e.what()};
    }
    if (client.own_keys.secret_key.empty()) throw Failure{kConfig, o.key + ": not a secret certificate (.key_secret)"};
  }
  try {
    return std::make_unique<themis::net::RequestClient>(client);
  } catch (const std::invalid_argument& e) {
    throw Failure{kUsage, std::string("--coordinator: ") + e.what()};
  }
}

// A connection that never came up (docs/admin.md "themisctl: connection errors"): nothing was sent.
void throw_connection_failure(const themis::net::ConnectionOutcome& outcome) {
  using S = themis::net::ConnectionState;
  switch (outcome.state) {
    case S::kNotEnrolled: throw Failure{kDenied, outcome.message};
    case S::kServerKeyMismatch:
    case S::kSecurityMismatch: throw Failure{kConfig, outcome.message};
    default: throw Failure{kUnreachable, outcome.message};
  }
}

[[noreturn]] void throw_error(themis::wire::ErrorReply::Reader e) {
  const std::string message = e.getMessage();
  switch (e.getCode()) {
    case themis::wire::ErrorCode::DENIED: throw Failure{kDenied, message};
    case themis::wire::ErrorCode::NOT_FOUND: throw Failure{kNotFound, message};
    case themis::wire::ErrorCode::BAD_SPEC: throw Failure{kBadSpec, message};
    default: throw Failure{kError, message};
  }
}

json call(themis::net::RequestClient& rc, const Options& o, themis::net::OutMessage& request) {
  auto reply = rc.call(request);
  if (!reply && rc.connection_failure()) throw_connection_failure(*rc.connection_failure());
  if (!reply) {
    throw Failure{kUnreachable, "no answer from " + o.coordinator + " within " + std::to_string(o.timeout_ms) + " ms" +
                                    (rc.handshake_pending() ? " (connected, but the CURVE handshake never completed: the "
                                                              "coordinator is stopped or overloaded, or the server key is wrong)"
                                                            : "")};
  }
  const auto body = reply->envelope().getBody();
  using W = themis::wire::Envelope::Body::Which;
  switch (reply->which()) {
    case W::ERROR: throw_error(body.getError());
    case W::QUERY_REPLY: return json::parse(std::string(body.getQueryReply().getJson()));
    case W::SUBMITTED:
      return {{"app", body.getSubmitted().getApp()}, {"name", std::string(body.getSubmitted().getName())},
              {"jobs", body.getSubmitted().getJobs()}};
    case W::ACK: return {{"message", std::string(body.getAck().getMessage())}};
    default: throw Failure{kError, "unexpected reply '" + themis::net::body_name(reply->which()) + "'"};
  }
}

json call(const Options& o, themis::net::OutMessage& request) {
  auto rc = open_client(o);
  return call(*rc, o, request);
}

// themisctl logs: a job's output, read from its nodelet through the coordinator one chunk at a time.
struct LogChunk {
  std::string data;
  std::uint64_t offset = 0, size = 0;
  std::uint32_t attempt = 0;
  std::string host;
  bool ended = false, missing = false;
};

LogChunk read_log(themis::net::RequestClient& rc, const Options& o, const themis::ctl::JobName& job, std::uint32_t attempt,
                  std::uint32_t rank, std::uint64_t offset) {
  themis::net::OutMessage out(rc.next_request_id());
  auto r = out.body().initReadLog();
  r.setApp(job.app);
  r.setJob(job.job);
  r.setAttempt(attempt);
  r.setRank(rank);
  r.setOffset(offset);
  r.setMaxBytes(65536);
  auto reply = rc.call(out);
  if (!reply) throw Failure{kUnreachable, "no answer from " + o.coordinator + " (unreachable, or the key is not enrolled)"};
  const auto body = reply->envelope().getBody();
  using W = themis::wire::Envelope::Body::Which;
  if (reply->which() == W::ERROR) throw_error(body.getError());
  if (reply->which() != W::LOG_CHUNK) throw Failure{kError, "unexpected reply '" + themis::net::body_name(reply->which()) + "'"};
  const auto c = body.getLogChunk();
  const auto data = c.getData();
  return {std::string(reinterpret_cast<const char*>(data.begin()), data.size()), c.getOffset(), c.getSize(), c.getAttempt(),
          c.getHost(), c.getEnded(), c.getMissing()};
}

// Prints the log from its start; with `follow`, goes on printing what is written until the attempt ends.
int print_log(const Options& o, const themis::ctl::JobName& job, std::uint32_t attempt, std::uint32_t rank, bool follow) {
  auto rc = open_client(o);
  std::uint64_t offset = 0;
  bool saw_end = false;
  for (;;) {
    const LogChunk c = read_log(*rc, o, job, attempt, rank, offset);
    attempt = c.attempt;  // stay with the attempt first read, even if the job is retried meanwhile
    if (c.missing && !follow) {
      throw Failure{kNotFound, "job " + std::to_string(job.app) + "_" + std::to_string(job.job) + " attempt " +
                                   std::to_string(attempt) + " rank " + std::to_string(rank) + " has no log on " + c.host};
    }
    std::cout.write(c.data.data(), static_cast<std::streamsize>(c.data.size()));
    std::cout.flush();
    offset = c.offset + c.data.size();
    if (offset < c.size) continue;  // more is there already
    if (!follow) return kOk;
    // Read once more after the end is seen: the last lines may have been written after this read.
    if (c.ended && (saw_end || c.data.empty())) return kOk;
    saw_end = saw_end || c.ended;
    if (!c.ended) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

// Submit retries (docs/admin.md "themisctl submit: retries and tokens"): a submit that gets no answer within
// --timeout-ms is sent again with the same token, so the coordinator answers a repeat with the app the first
// one made.
constexpr int kSubmitAttempts = 3;
constexpr std::chrono::seconds kSubmitFirstBackoff{1};  // doubles after each retry: 1 s, 2 s

std::string random_submit_token() {
  std::random_device random;
  std::ostringstream token;
  for (int i = 0; i < 4; ++i) token << std::hex << std::setw(8) << std::setfill('0') << random();  // 128 bits
  return token.str();
}

json submit_with_retries(const Options& o, const std::string& spec, const std::string& spec_name, const std::string& token) {
  // One socket for every attempt: an attempt still queued in it (the coordinator was slow to accept the
  // connection) is delivered too, and answered as a repeat.
  auto rc = open_client(o);
  auto backoff = kSubmitFirstBackoff;
  for (int attempt = 1;; ++attempt) {
    themis::net::OutMessage out(rc->next_request_id());
    auto s = out.body().initSubmit();
    s.setSpec(spec);
    s.setSpecName(spec_name);
    s.setToken(token);
    try {
      return call(*rc, o, out);
    } catch (const Failure& f) {
      // A connection that never came up sent nothing: retrying cannot make a second app, nor help.
      if (f.code != kUnreachable || rc->connection_failure()) throw;
      if (attempt == kSubmitAttempts) {
        throw Failure{kUnreachable, f.message + "; gave up after " + std::to_string(kSubmitAttempts) +
                                        " attempts; run the same submit with --token " + token +
                                        " to try again without risking a second app"};
      }
      std::cerr << "themisctl: no answer within " << o.timeout_ms << " ms; sending again with the same token in "
                << backoff.count() << " s (attempt " << attempt + 1 << " of " << kSubmitAttempts << ")\n";
      std::this_thread::sleep_for(backoff);
      backoff *= 2;
    }
  }
}

themis::net::OutMessage query(themis::wire::QueryKind kind, std::int64_t app = 0) {
  themis::net::OutMessage out(1);
  auto q = out.body().initQuery();
  q.setKind(kind);
  q.setApp(app);
  return out;
}

void explain(const json& doc) {
  // The coordinator's verdict first (coordinator/explain.h), then the app, its jobs and its rounds.
  if (const auto& verdict = doc.value("verdict", json()); verdict.is_object()) {
    std::cout << cell(verdict["state"]) << " (" << cell(verdict["reason"]) << "): " << cell(verdict["headline"]) << "\n";
    for (const auto& line : verdict["details"]) std::cout << "  " << cell(line) << "\n";
    std::cout << "\n";
  }
  const auto& app = doc["app"];
  std::cout << "App " << cell(app["app"]) << " (" << cell(app["name"]) << ", owner " << cell(app["owner"]) << ") is "
            << cell(app["state"]) << "; rho=" << cell(app["rho"]) << ", holds " << cell(app["gpus_held"]) << " GPUs.\n";
  std::cout << "  Jobs: " << cell(app["jobs_running"]) << " running, " << cell(app["jobs_pending"]) << " pending, "
            << cell(app["jobs_done"]) << " done. Free GPUs now: " << cell(doc["free_gpus"])
            << "; next lease expiry: " << cell(doc["next_expiry"]) << "\n";
  for (const auto& job : doc["jobs"]) {
    // A stored "New" only means no placement yet; the verdict above says why.
    if (job["state"] == "PENDING" && !(doc.contains("verdict") && job["reason"] == "New")) std::cout << "  Job " << cell(app["app"]) << "_" << cell(job["job"]) << " PENDING (" << cell(job["reason"]) << ")\n";
    if (job["state"] == "FAILED") std::cout << "  Job " << cell(app["app"]) << "_" << cell(job["job"]) << " FAILED: exit " << cell(job["exit_code"]) << " signal " << cell(job["exit_signal"]) << "\n    last lines: " << cell(job["log_tail"]) << "\n";
  }
  if (doc["rounds"].empty()) {
    if (!doc.contains("verdict")) std::cout << "  No round has considered this app yet (reason New: waiting for the first round).\n";
    return;
  }
  std::cout << "  Recent rounds:\n";
  for (const auto& r : doc["rounds"]) {
    const bool won = r["won"] != "[]";
    const bool bid = !r["rho_no_new"].is_null();
    std::cout << "    round " << cell(r["round"]) << " (" << cell(r["trigger"]) << ", " << cell(r["policy"]) << "): "
              << cell(r["free_gpus"]) << " free GPUs among " << cell(r["apps"]) << " apps; rho " << cell(r["rho_before"])
              << " ranked " << cell(r["rho_rank"]) << "; offered to " << cell(r["offered_to"]) << "; "
              << (bid ? "bid " + cell(r["bid_rows"]) : "no bid (no launcher: takes leftovers)") << "; "
              << (won ? "won " + cell(r["won"]) + " as " + cell(r["grant_kind"]) : "won nothing") << "\n";
  }
}

// Failed attempts and admission, for explain (docs/reliability.md): why an app waits for admission, and
// each failed attempt with its class and what the retry policy decided.
void explain_reliability(const json& doc) {
  const auto& app = doc["app"];
  if (app.contains("admission") && app["admission"].is_string()) std::cout << "  Admission: " << cell(app["admission"]) << "\n";
  if (!doc.contains("failures") || doc["failures"].empty()) return;
  std::cout << "  Failed attempts (newest first):\n";
  for (const auto& f : doc["failures"]) {
    std::cout << "    job " << cell(app["app"]) << "_" << cell(f["job"]) << " attempt " << cell(f["attempt"]) << ": "
              << cell(f["class"]) << " (" << cell(f["reason"]) << "); " << cell(f["summary"]) << "\n";
  }
}

int run_sql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  const std::string uri = "file:" + db_path + "?mode=ro";
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
    std::cerr << "themisctl sql: " << db_path << ": " << sqlite3_errmsg(db) << "\n";
    sqlite3_close(db);
    return kConfig;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_exec(db, "PRAGMA query_only=ON", nullptr, nullptr, nullptr);
  // mode=ro and query_only keep the database itself safe, but not other files: VACUUM INTO would create one.
  // Every statement must compile, and be a read, before any runs.
  for (const char* rest = sql.c_str(); rest && *rest;) {
    sqlite3_stmt* statement = nullptr;
    const char* next = nullptr;
    if (sqlite3_prepare_v2(db, rest, -1, &statement, &next) != SQLITE_OK) {
      std::cerr << "themisctl sql: " << sqlite3_errmsg(db) << "\n";
      sqlite3_close(db);
      return kError;
    }
    const bool writes = statement && !sqlite3_stmt_readonly(statement);
    const std::string text = statement ? sqlite3_sql(statement) : "";
    sqlite3_finalize(statement);
    if (writes) {
      std::cerr << "themisctl sql: refused, not a read-only statement: " << text << "\n";
      sqlite3_close(db);
      return kError;
    }
    rest = next;
  }
  auto print_row = [](void*, int n, char** values, char** names) -> int {
    static bool header_done = false;
    if (!header_done) {
      for (int i = 0; i < n; ++i) std::cout << (i ? "|" : "") << names[i];
      std::cout << "\n";
      header_done = true;
    }
    for (int i = 0; i < n; ++i) std::cout << (i ? "|" : "") << (values[i] ? values[i] : "");
    std::cout << "\n";
    return 0;
  };
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), print_row, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::cerr << "themisctl sql: " << (error ? error : "error") << "\n";
    sqlite3_free(error);
    sqlite3_close(db);
    return kError;
  }
  sqlite3_close(db);
  return kOk;
}

std::vector<std::string> command_names(const CLI::App& cli) {
  std::vector<std::string> names;
  for (const auto* sub : cli.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

std::string command_list(const CLI::App& cli) {
  std::ostringstream out;
  out << "Commands:\n";
  for (const auto* sub : cli.get_subcommands([](const CLI::App*) { return true; })) {
    out << "  " << std::left << std::setw(10) << sub->get_name() << " " << sub->get_description() << "\n";
  }
  out << "Run 'themisctl --help' for the options.\n";
  return out.str();
}

// The first word on the command line that is neither an option, nor an option's value, nor a command.
std::optional<std::string> unknown_command(const CLI::App& cli, int argc, char** argv) {
  const auto commands = command_names(cli);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("-", 0) == 0) {
      if (arg.find('=') != std::string::npos) continue;
      const auto* option = cli.get_option_no_throw(arg);
      if (option && option->get_expected_max() > 0) ++i;  // skips the option's value
      continue;
    }
    if (std::find(commands.begin(), commands.end(), arg) != commands.end()) return std::nullopt;
    return arg;
  }
  return std::nullopt;
}

// A list command's columns: the default table and `-o wide`.
struct Columns {
  std::vector<std::string> table, wide;
};

const Columns kAppColumns{{"app", "name", "owner", "state", "progress", "gpus_held", "jobs", "submitted", "reason"},
                          {"app", "name", "owner", "state", "progress", "rho", "gpus_held", "jobs", "jobs_running", "jobs_pending",
                           "jobs_done", "submitted", "reason", "admission"}};
const Columns kNodeColumns{{"host", "rack", "state", "gpus", "allocated", "utilisation", "drain", "drain_reason"},
                           {"host", "rack", "state", "gpus", "allocated", "utilisation", "drain", "drain_reason"}};
const Columns kLeaseColumns{{"lease_id", "gpu", "host", "app", "app_name", "owner", "job", "expiry"},
                            {"lease_id", "gpu", "host", "local_index", "app", "app_name", "owner", "job", "round", "start", "expiry"}};
const Columns kRoundColumns{{"round", "started", "duration_ms", "trigger", "free_gpus", "apps", "granted", "idle", "outcome",
                             "worst_loop_lag_ms"},
                            {"round", "started", "duration_ms", "trigger", "policy", "free_gpus", "apps", "granted", "idle", "outcome",
                             "worst_loop_lag_ms"}};
const Columns kHistoryColumns{{"app", "name", "owner", "state", "finished", "jct_s", "rho", "gpu_hours", "exit"},
                              {"app", "name", "owner", "state", "submitted", "finished", "jct_s", "rho", "gpu_hours", "jobs", "exit"}};
const std::vector<std::string> kTotalColumns{"user", "apps", "completed", "failed", "cancelled", "gpu_hours", "mean_jct_s", "mean_rho"};

const std::vector<std::string> kAppStates{"QUEUED", "PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"};
const std::vector<std::string> kFinishedStates{"COMPLETED", "FAILED", "CANCELLED"};
const std::vector<std::string> kHostStates{"UP", "DOWN"};

const std::vector<std::string>& columns_for(const Options& o, const Columns& c) { return o.output == OutputFormat::kWide ? c.wide : c.table; }

// Runs `draw` once, or every `watch` seconds until interrupted, clearing the screen before each (not for JSON:
// one document per line, for a pipe).
void repeat(const std::optional<double>& watch, const Options& o, const std::function<void()>& draw) {
  for (;;) {
    if (watch && o.output != OutputFormat::kJson) std::cout << "\x1b[2J\x1b[H";
    draw();
    std::cout.flush();
    if (!watch) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(*watch));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"themisctl: submit and inspect apps on a themis cluster", "themisctl"};
  cli.footer(
      "Anywhere on the line: -o json|wide|table (--json is -o json); -w/--watch [SECONDS] redraws a list command "
      "(apps, nodes, leases, rounds, history) every SECONDS (2).\n"
      "Exit codes: 0 ok; 1 request rejected or internal error; 2 usage; 65 invalid spec; 69 cannot connect to the "
      "coordinator, or no answer; 77 permission denied or key not enrolled; 78 configuration error or server key "
      "mismatch; 102 not found.\n"
      "Environment: THEMIS_COORDINATOR, THEMIS_KEY (own .key_secret), THEMIS_SERVER_KEY (coordinator .key).");
  Options o;
  themis::ctl::GlobalFlags global;
  try {
    global = themis::ctl::take_global_flags(std::vector<std::string>(argv, argv + argc));
  } catch (const std::invalid_argument& e) {
    std::cerr << "themisctl: " << e.what() << "\n";
    return kUsage;
  }
  o.output = global.output;
  if (const char* v = std::getenv("THEMIS_COORDINATOR")) o.coordinator = v;
  if (const char* v = std::getenv("THEMIS_KEY")) o.key = v;
  if (const char* v = std::getenv("THEMIS_SERVER_KEY")) o.server_key = v;
  cli.add_option("--coordinator", o.coordinator, "host:port or tcp://host:port (default port 7310)");
  cli.add_option("--key", o.key, "your secret certificate (.key_secret)");
  cli.add_option("--server-key", o.server_key, "the coordinator's public certificate (.key)");
  cli.add_flag("--insecure", o.insecure, "no CURVE (loopback coordinators in insecure mode only)");
  cli.add_option("--timeout-ms", o.timeout_ms, "RPC timeout");
  cli.require_subcommand(1);
  std::string spec_path, db_path, sql, name, token, dir = ".";
  std::string user, state, since, until;
  std::int64_t app = 0;
  bool parsable = false, force = false;
  auto add_filters = [&](CLI::App* c, bool with_user, bool with_state, bool with_since, bool with_until) {
    if (with_user) c->add_option("--user", user, "only this owner's");
    if (with_state) c->add_option("--state", state, "only these states, comma-separated (e.g. pending,running)");
    if (with_since) c->add_option("--since", since, "from this UTC time (2026-11-25, 2026-11-25T19:00:00Z) or time ago (30m, 2h, 7d)");
    if (with_until) c->add_option("--until", until, "before this time (same forms)");
  };
  auto* submit = cli.add_subcommand("submit", "submit an app spec (TOML, docs/app-spec.md)");
  submit->add_option("spec", spec_path)->required();
  submit->add_flag("--parsable", parsable, "print only the app id");
  submit->add_option("--token", token,
                     "idempotency key, at most 128 printable ASCII bytes (default: 128 random bits in hex). Your submits "
                     "with the same token and spec make one app; the same token with another spec is refused");
  submit->footer("With no answer within --timeout-ms the submit is sent again with the same token, " +
                 std::to_string(kSubmitAttempts) + " attempts in all, after " +
                 std::to_string(kSubmitFirstBackoff.count()) + " s and then " +
                 std::to_string(2 * kSubmitFirstBackoff.count()) +
                 " s; a repeat is answered with the app the first attempt made, so none is created twice.");
  auto* apps = cli.add_subcommand("apps", "list apps: state, progress, and REASON a pending one waits (as explain says)");
  add_filters(apps, true, true, true, false);
  auto* show = cli.add_subcommand("show", "an app with its jobs and events");
  show->add_option("app", app)->required();
  auto* cancel = cli.add_subcommand("cancel", "cancel an app (owner or admin)");
  cancel->add_option("app", app)->required();
  auto* explain_cmd = cli.add_subcommand("explain", "why an app is pending, its ρ, its bids, what it won");
  explain_cmd->add_option("app", app)->required();
  auto* nodes = cli.add_subcommand("nodes", "hosts and GPU allocation")->alias("hosts");
  add_filters(nodes, false, true, false, false);
  auto* leases = cli.add_subcommand("leases", "active leases");
  add_filters(leases, true, false, false, false);
  auto* rounds = cli.add_subcommand("rounds", "recent rounds");
  add_filters(rounds, false, false, true, false);
  auto* history = cli.add_subcommand("history", "finished apps with JCT, ρ, GPU-hours and exit status, and per-user totals");
  add_filters(history, true, true, true, true);
  std::string host, reason;
  auto* drain = cli.add_subcommand("drain", "admins: lease none of HOST's GPUs again; its jobs run until their leases end");
  drain->add_option("host", host)->required();
  drain->add_option("--reason", reason, "why (shown in themisctl hosts)")->required();
  auto* resume = cli.add_subcommand("resume", "admins: lease a drained HOST's GPUs again");
  resume->add_option("host", host)->required();
  std::string job_name;
  std::uint32_t log_attempt = 0, log_rank = 0;
  bool follow = false;
  auto* logs = cli.add_subcommand("logs", "a job's output (stdout and stderr), from the nodelet that ran it (owner or admin)");
  logs->add_option("job", job_name, "APP or APP/JOB (job 0 if left out)")->required();
  logs->add_flag("-f,--follow", follow, "keep printing what the job writes until its attempt ends");
  logs->add_option("--attempt", log_attempt, "which attempt (default: the latest)");
  logs->add_option("--rank", log_rank, "which rank of a gang job (default 0)");
  auto* whoami = cli.add_subcommand("whoami", "identity and role as the coordinator sees it");
  auto* keygen = cli.add_subcommand("keygen", "write NAME.key and NAME.key_secret (0600)");
  keygen->add_option("name", name)->required();
  keygen->add_option("--dir", dir);
  keygen->add_flag("--force", force);
  auto* sql_cmd = cli.add_subcommand("sql", "read-only SQL on the coordinator database (admins)");
  sql_cmd->add_option("--db", db_path, "database file")->required();
  sql_cmd->add_option("query", sql)->required();
  try {
    std::vector<std::string> rest(global.rest.rbegin(), global.rest.rend() - 1);  // CLI11 takes them reversed
    cli.parse(rest);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      if (const auto word = unknown_command(cli, argc, argv)) {
        std::cerr << "themisctl: unknown command '" << *word << "'"
                  << themis::did_you_mean(*word, command_names(cli)) << "\n" << command_list(cli);
        return kUsage;
      }
      if (cli.get_subcommands().empty() && dynamic_cast<const CLI::RequiredError*>(&e)) {
        std::cerr << "themisctl: a command is required\n" << command_list(cli);
        return kUsage;
      }
    }
    const int rc = cli.exit(e);
    return rc == 0 ? 0 : kUsage;
  }
  const bool is_list = apps->parsed() || nodes->parsed() || leases->parsed() || rounds->parsed() || history->parsed();
  if (global.watch_seconds && !is_list) {
    std::cerr << "themisctl: --watch applies to the list commands (apps, nodes, leases, rounds, history)\n";
    return kUsage;
  }
  try {
    using K = themis::wire::QueryKind;
    const double now = static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::system_clock::now().time_since_epoch()).count()) / 1000.0;
    themis::ctl::ListFilter filter;
    try {
      filter.user = user;
      if (!state.empty()) {
        filter.states = themis::ctl::parse_states(state, history->parsed() ? kFinishedStates : nodes->parsed() ? kHostStates : kAppStates);
      }
      if (!since.empty()) filter.since = themis::ctl::parse_time(since, now, "--since");
      if (!until.empty()) filter.until = themis::ctl::parse_time(until, now, "--until");
    } catch (const std::invalid_argument& e) {
      std::cerr << "themisctl: " << e.what() << "\n";
      return kUsage;
    }
    if (keygen->parsed()) {
      themis::net::write_certificate(dir, name, themis::net::generate_curve_keypair(), force);
      std::cout << dir << "/" << name << ".key\n" << dir << "/" << name << ".key_secret\n";
      return kOk;
    }
    if (sql_cmd->parsed()) return run_sql(db_path, sql);
    if (submit->parsed()) {
      std::ifstream in(spec_path);
      if (!in) throw Failure{kBadSpec, spec_path + ": cannot read"};
      std::stringstream text;
      text << in.rdbuf();
      const auto r = submit_with_retries(o, text.str(), spec_path, token.empty() ? random_submit_token() : token);
      if (o.output == OutputFormat::kJson) std::cout << r.dump() << "\n";
      else if (parsable) std::cout << r["app"] << "\n";
      else std::cout << "Submitted app " << r["app"] << " (" << r["name"].get<std::string>() << ") with " << r["jobs"] << " jobs\n";
      return kOk;
    }
    if (cancel->parsed()) {
      themis::net::OutMessage out(1);
      out.body().initCancel().setApp(app);
      std::cout << call(o, out)["message"].get<std::string>() << "\n";
      return kOk;
    }
    if (logs->parsed()) {
      themis::ctl::JobName job;
      try {
        job = themis::ctl::parse_job_name(job_name);
      } catch (const std::invalid_argument& e) {
        std::cerr << "themisctl logs: " << e.what() << "\n";
        return kUsage;
      }
      return print_log(o, job, log_attempt, log_rank, follow);
    }
    if (drain->parsed() || resume->parsed()) {
      themis::net::OutMessage out(1);
      if (drain->parsed()) {
        auto d = out.body().initDrain();
        d.setHost(host);
        d.setReason(reason);
      } else {
        out.body().initResume().setHost(host);
      }
      const auto r = call(o, out);
      std::cout << (o.output == OutputFormat::kJson ? r.dump() : r["message"].get<std::string>()) << "\n";
      return kOk;
    }
    // A list: the coordinator's items, filtered, as a table or JSON (with the same filter applied).
    auto list = [&](K kind, const Columns& columns, const std::string& time_field) {
      auto out = query(kind);
      auto doc = call(o, out);
      doc["items"] = themis::ctl::filter_items(doc["items"], filter, time_field);
      if (o.output == OutputFormat::kJson) std::cout << doc.dump() << "\n";
      else themis::ctl::print_table(std::cout, doc["items"], columns_for(o, columns));
    };
    if (apps->parsed()) repeat(global.watch_seconds, o, [&] { list(K::APPS, kAppColumns, "submitted"); });
    if (nodes->parsed()) repeat(global.watch_seconds, o, [&] { list(K::NODES, kNodeColumns, ""); });
    if (leases->parsed()) repeat(global.watch_seconds, o, [&] { list(K::LEASES, kLeaseColumns, "start"); });
    if (rounds->parsed()) repeat(global.watch_seconds, o, [&] { list(K::ROUNDS, kRoundColumns, "started"); });
    if (history->parsed()) {
      repeat(global.watch_seconds, o, [&] {
        auto out = query(K::HISTORY);
        auto q = out.envelope().getBody().getQuery();  // body() would start a new body
        q.setSince(filter.since.value_or(0));
        q.setUntil(filter.until.value_or(0));
        q.setUser(filter.user);
        auto doc = call(o, out);
        if (!filter.states.empty()) {
          themis::ctl::ListFilter by_state;
          by_state.states = filter.states;
          doc["items"] = themis::ctl::filter_items(doc["items"], by_state, "");
        }
        if (o.output == OutputFormat::kJson) {
          std::cout << doc.dump() << "\n";
          return;
        }
        themis::ctl::print_table(std::cout, doc["items"], columns_for(o, kHistoryColumns));
        std::cout << "\nPer user";
        if (!doc["since"].is_null() || !doc["until"].is_null()) {
          std::cout << ", apps that finished " << (doc["since"].is_null() ? "" : "from " + since + " ")
                    << (doc["until"].is_null() ? "" : "before " + until);
        }
        std::cout << ":\n";
        themis::ctl::print_table(std::cout, doc["totals"], kTotalColumns);
      });
    }
    if (whoami->parsed()) {
      auto out = query(K::WHOAMI);
      const auto doc = call(o, out);
      std::cout << ((o.output == OutputFormat::kJson) ? doc.dump() : doc["role"].get<std::string>() + ":" + doc["principal"].get<std::string>()) << "\n";
    }
    if (show->parsed() || explain_cmd->parsed()) {
      auto out = query(show->parsed() ? K::APP : K::EXPLAIN, app);
      const auto doc = call(o, out);
      if ((o.output == OutputFormat::kJson)) std::cout << doc.dump() << "\n";
      else if (explain_cmd->parsed()) {
        explain(doc);
        explain_reliability(doc);
      }
      else {
        themis::ctl::print_table(std::cout, json::array({doc["app"]}), {"app", "name", "owner", "state", "rho", "gpus_held", "submitted", "reason"});
        std::cout << "\nJobs:\n";
        themis::ctl::print_table(std::cout, doc["jobs"], {"job", "state", "reason", "attempt", "placement", "exit_code", "retry_at", "failure", "hparams"});
        if (doc.contains("failures") && !doc["failures"].empty()) {
          std::cout << "\nFailed attempts:\n";
          themis::ctl::print_table(std::cout, doc["failures"], {"job", "attempt", "time", "class", "exit_code", "exit_signal", "decision", "summary", "reason"});
        }
        std::cout << "\nEvents:\n";
        themis::ctl::print_table(std::cout, doc["events"], {"time", "kind", "job", "host", "round", "message"});
      }
    }
    return kOk;
  } catch (const Failure& f) {
    std::cerr << "themisctl: " << f.message << "\n";
    return f.code;
  } catch (const std::exception& e) {
    std::cerr << "themisctl: " << e.what() << "\n";
    return kError;
  }
}
