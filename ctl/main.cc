// themisctl: the themis command-line client. Exit codes (docs/admin.md "Errors and exit codes") are listed in --help.
#include <sqlite3.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <optional>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "core/closest_name.h"
#include "net/curve_keys.h"
#include "net/endpoint.h"
#include "net/request_client.h"

namespace {

using nlohmann::json;
constexpr int kOk = 0, kError = 1, kUsage = 2, kBadSpec = 65, kUnreachable = 69, kDenied = 77, kConfig = 78,
              kNotFound = 102;

struct Options {
  std::string coordinator = "tcp://127.0.0.1:7310";
  std::string key;         // own .key_secret
  std::string server_key;  // coordinator .key
  bool insecure = false;
  bool json_output = false;
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
    case W::ERROR: {
      const auto e = body.getError();
      const std::string message = e.getMessage();
      switch (e.getCode()) {
        case themis::wire::ErrorCode::DENIED: throw Failure{kDenied, message};
        case themis::wire::ErrorCode::NOT_FOUND: throw Failure{kNotFound, message};
        case themis::wire::ErrorCode::BAD_SPEC: throw Failure{kBadSpec, message};
        default: throw Failure{kError, message};
      }
    }
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

std::string cell(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    std::ostringstream out;
    out.precision(3);
    out << std::fixed << v.get<double>();
    return out.str();
  }
  return v.dump();
}

void print_table(const json& items, const std::vector<std::string>& columns) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> width;
  std::vector<std::string> header;
  for (const auto& c : columns) {
    std::string h = c;
    for (auto& ch : h) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    header.push_back(h);
    width.push_back(h.size());
  }
  for (const auto& item : items) {
    std::vector<std::string> row;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      row.push_back(item.contains(columns[i]) ? cell(item[columns[i]]) : "-");
      width[i] = std::max(width[i], row.back().size());
    }
    rows.push_back(row);
  }
  auto print = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      std::cout << row[i];
      if (i + 1 < row.size()) std::cout << std::string(width[i] - row[i].size() + 2, ' ');
    }
    std::cout << "\n";
  };
  print(header);
  for (const auto& row : rows) print(row);
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
  if (app.contains("reason") && app["reason"].is_string()) std::cout << "  Admission: " << cell(app["reason"]) << "\n";
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"themisctl: submit and inspect apps on a themis cluster"};
  cli.footer(
      "Exit codes: 0 ok; 1 request rejected or internal error; 2 usage; 65 invalid spec; 69 cannot connect to the "
      "coordinator, or no answer; 77 permission denied or key not enrolled; 78 configuration error or server key "
      "mismatch; 102 not found.\n"
      "Environment: THEMIS_COORDINATOR, THEMIS_KEY (own .key_secret), THEMIS_SERVER_KEY (coordinator .key).");
  Options o;
  if (const char* v = std::getenv("THEMIS_COORDINATOR")) o.coordinator = v;
  if (const char* v = std::getenv("THEMIS_KEY")) o.key = v;
  if (const char* v = std::getenv("THEMIS_SERVER_KEY")) o.server_key = v;
  cli.add_option("--coordinator", o.coordinator, "host:port or tcp://host:port (default port 7310)");
  cli.add_option("--key", o.key, "your secret certificate (.key_secret)");
  cli.add_option("--server-key", o.server_key, "the coordinator's public certificate (.key)");
  cli.add_flag("--insecure", o.insecure, "no CURVE (loopback coordinators in insecure mode only)");
  cli.add_flag("--json", o.json_output, "print JSON");
  cli.add_option("--timeout-ms", o.timeout_ms, "RPC timeout");
  cli.require_subcommand(1);
  std::string spec_path, db_path, sql, name, token, dir = ".";
  std::int64_t app = 0;
  bool watch = false, parsable = false, force = false;
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
  auto* apps = cli.add_subcommand("apps", "list apps");
  apps->add_flag("-w,--watch", watch, "redraw every 2 s");
  auto* show = cli.add_subcommand("show", "an app with its jobs and events");
  show->add_option("app", app)->required();
  auto* cancel = cli.add_subcommand("cancel", "cancel an app (owner or admin)");
  cancel->add_option("app", app)->required();
  auto* explain_cmd = cli.add_subcommand("explain", "why an app is pending, its ρ, its bids, what it won");
  explain_cmd->add_option("app", app)->required();
  auto* nodes = cli.add_subcommand("nodes", "hosts and GPU allocation");
  auto* leases = cli.add_subcommand("leases", "active leases");
  auto* rounds = cli.add_subcommand("rounds", "recent rounds");
  auto* whoami = cli.add_subcommand("whoami", "identity and role as the coordinator sees it");
  auto* keygen = cli.add_subcommand("keygen", "write NAME.key and NAME.key_secret (0600)");
  keygen->add_option("name", name)->required();
  keygen->add_option("--dir", dir);
  keygen->add_flag("--force", force);
  auto* sql_cmd = cli.add_subcommand("sql", "read-only SQL on the coordinator database (admins)");
  sql_cmd->add_option("--db", db_path, "database file")->required();
  sql_cmd->add_option("query", sql)->required();
  try {
    cli.parse(argc, argv);
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
  try {
    using K = themis::wire::QueryKind;
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
      if (o.json_output) std::cout << r.dump() << "\n";
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
    auto list = [&](K kind, const std::vector<std::string>& columns) {
      auto out = query(kind);
      const auto doc = call(o, out);
      if (o.json_output) std::cout << doc.dump() << "\n";
      else print_table(doc["items"], columns);
    };
    if (apps->parsed()) {
      do {
        if (watch) std::cout << "\x1b[2J\x1b[H";
        list(K::APPS, {"app", "name", "owner", "state", "rho", "gpus_held", "jobs_running", "jobs_pending", "jobs_done", "submitted",
                       "reason"});
        if (watch) std::this_thread::sleep_for(std::chrono::seconds(2));
      } while (watch);
      return kOk;
    }
    if (nodes->parsed()) list(K::NODES, {"host", "rack", "state", "gpus", "allocated", "utilisation"});
    if (leases->parsed()) list(K::LEASES, {"lease_id", "gpu", "host", "local_index", "app", "app_name", "owner", "job", "round", "start", "expiry"});
    if (rounds->parsed()) list(K::ROUNDS, {"round", "started", "duration_ms", "trigger", "policy", "free_gpus", "apps", "granted", "idle", "outcome",
                                            "worst_loop_lag_ms"});
    if (whoami->parsed()) {
      auto out = query(K::WHOAMI);
      const auto doc = call(o, out);
      std::cout << (o.json_output ? doc.dump() : doc["role"].get<std::string>() + ":" + doc["principal"].get<std::string>()) << "\n";
    }
    if (show->parsed() || explain_cmd->parsed()) {
      auto out = query(show->parsed() ? K::APP : K::EXPLAIN, app);
      const auto doc = call(o, out);
      if (o.json_output) std::cout << doc.dump() << "\n";
      else if (explain_cmd->parsed()) {
        explain(doc);
        explain_reliability(doc);
      }
      else {
        print_table(json::array({doc["app"]}), {"app", "name", "owner", "state", "rho", "gpus_held", "submitted", "reason"});
        std::cout << "\nJobs:\n";
        print_table(doc["jobs"], {"job", "state", "reason", "attempt", "placement", "exit_code", "retry_at", "failure", "hparams"});
        if (doc.contains("failures") && !doc["failures"].empty()) {
          std::cout << "\nFailed attempts:\n";
          print_table(doc["failures"], {"job", "attempt", "time", "class", "exit_code", "exit_signal", "decision", "summary", "reason"});
        }
        std::cout << "\nEvents:\n";
        print_table(doc["events"], {"time", "kind", "job", "host", "round", "message"});
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
