#include "sim/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/model_catalog.h"

namespace themis::sim {
namespace {

using nlohmann::json;

[[noreturn]] void fail(std::string_view where, const std::string& field, const std::string& reason) {
  throw TraceError(std::string(where) + ": " + field + ": " + reason);
}

const json& require(const json& obj, const char* key, std::string_view where, const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end()) fail(where, path + key, "missing");
  return *it;
}

double number(const json& v, std::string_view where, const std::string& field) {
  if (!v.is_number()) fail(where, field, "must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(where, field, "must be finite");
  return d;
}

double positive(const json& v, std::string_view where, const std::string& field) {
  const double d = number(v, where, field);
  if (d <= 0) fail(where, field, "must be > 0");
  return d;
}

long long positive_integer(const json& v, std::string_view where, const std::string& field) {
  if (!v.is_number_integer() || v.get<long long>() <= 0) fail(where, field, "must be a positive integer");
  return v.get<long long>();
}

LossCurve parse_loss(const json& v, std::string_view where, const std::string& field) {
  if (!v.is_object()) fail(where, field, "must be an object {a, b, c}");
  LossCurve curve;
  for (const auto& [key, value] : v.items()) {
    const std::string f = field + "." + key;
    if (key == "a") curve.a = number(value, where, f);
    else if (key == "b") curve.b = number(value, where, f);
    else if (key == "c") curve.c = number(value, where, f);
    else fail(where, f, "unknown field");
  }
  if (curve.a < 0) fail(where, field + ".a", "must be >= 0");
  if (curve.b < 0) fail(where, field + ".b", "must be >= 0");
  return curve;
}

JobSpec parse_job(const json& j, std::string_view where, const std::string& path) {
  if (!j.is_object()) fail(where, path, "must be an object");
  static const char* const known[] = {"model", "gpus", "serial_iter_time", "iterations", "loss", "slowdown", "elastic"};
  for (const auto& [key, value] : j.items())
    if (std::find(std::begin(known), std::end(known), key) == std::end(known))
      fail(where, path + "." + key, "unknown field");
  JobSpec job;
  const json& model = require(j, "model", where, path + ".");
  if (!model.is_string() || model.get<std::string>().empty()) fail(where, path + ".model", "must be a non-empty string");
  job.model = model.get<std::string>();
  const long long gpus = positive_integer(require(j, "gpus", where, path + "."), where, path + ".gpus");
  if (gpus > 1 << 20) fail(where, path + ".gpus", "is unreasonably large");
  job.gpus = static_cast<int>(gpus);
  job.serial_iter_time = positive(require(j, "serial_iter_time", where, path + "."), where, path + ".serial_iter_time");
  job.iterations = positive_integer(require(j, "iterations", where, path + "."), where, path + ".iterations");
  if (auto it = j.find("loss"); it != j.end()) job.loss = parse_loss(*it, where, path + ".loss");
  if (auto it = j.find("elastic"); it != j.end()) {
    if (!it->is_boolean()) fail(where, path + ".elastic", "must be true or false");
    job.elastic = it->get<bool>();
  }
  if (auto it = j.find("slowdown"); it != j.end()) {
    if (!it->is_array() || it->size() != 4)
      fail(where, path + ".slowdown", "must be an array of 4 numbers [same_slot, same_machine, same_rack, cross_rack]");
    for (std::size_t k = 0; k < 4; ++k) {
      const std::string f = path + ".slowdown[" + std::to_string(k) + "]";
      job.slowdown[k] = number((*it)[k], where, f);
      if (job.slowdown[k] < 1.0) fail(where, f, "must be >= 1");
    }
  } else if (const ModelInfo* info = find_model(job.model)) {
    job.slowdown = info->slowdown;
  } else {
    fail(where, path + ".model", "unknown model '" + job.model + "' (give \"slowdown\" or use a catalog model)");
  }
  return job;
}

}  // namespace

std::string_view to_string(HyperScheme scheme) {
  return scheme == HyperScheme::kSingle ? "single" : "successive_halving";
}

double LossCurve::at(double iterations) const { return c + a / std::pow(1.0 + iterations, b); }

AppSpec parse_app_json(std::string_view line, std::string_view where) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number too large for a double
    fail(where, "json", std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) fail(where, "json", "each line must be one JSON object");
  static const char* const known[] = {"name", "arrival", "scheme", "jobs", "max_job_gpus"};
  for (const auto& [key, value] : j.items())
    if (std::find(std::begin(known), std::end(known), key) == std::end(known)) fail(where, key, "unknown field");
  AppSpec app;
  const json& name = require(j, "name", where, "");
  if (!name.is_string() || name.get<std::string>().empty()) fail(where, "name", "must be a non-empty string");
  app.name = name.get<std::string>();
  app.arrival = number(require(j, "arrival", where, ""), where, "arrival");
  if (app.arrival < 0) fail(where, "arrival", "must be >= 0");
  if (auto it = j.find("scheme"); it != j.end()) {
    if (*it == "single") app.scheme = HyperScheme::kSingle;
    else if (*it == "successive_halving") app.scheme = HyperScheme::kSuccessiveHalving;
    else fail(where, "scheme", "must be \"single\" or \"successive_halving\"");
  }
  if (auto it = j.find("max_job_gpus"); it != j.end())
    app.max_job_gpus = static_cast<int>(positive_integer(*it, where, "max_job_gpus"));
  const json& jobs = require(j, "jobs", where, "");
  if (!jobs.is_array() || jobs.empty()) fail(where, "jobs", "must be a non-empty array");
  for (std::size_t k = 0; k < jobs.size(); ++k)
    app.jobs.push_back(parse_job(jobs[k], where, "jobs[" + std::to_string(k) + "]"));
  return app;
}

std::vector<AppSpec> parse_trace(std::string_view text, std::string_view source_name) {
  std::vector<AppSpec> apps;
  std::vector<std::pair<std::string, int>> names;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') {
      if (end == text.size()) break;
      continue;
    }
    const std::string where = std::string(source_name) + ":" + std::to_string(line_no);
    AppSpec app = parse_app_json(line, where);
    for (const auto& [seen, seen_line] : names)
      if (seen == app.name) fail(where, "name", "duplicate app name '" + app.name + "' (first on line " + std::to_string(seen_line) + ")");
    names.emplace_back(app.name, line_no);
    apps.push_back(std::move(app));
    if (end == text.size()) break;
  }
  if (apps.empty()) throw TraceError(std::string(source_name) + ":1: trace: no apps");
  std::stable_sort(apps.begin(), apps.end(), [](const AppSpec& x, const AppSpec& y) { return x.arrival < y.arrival; });
  return apps;
}

void check_readable_file(const std::filesystem::path& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found)
    throw TraceError(path.string() + ":0: file: cannot open (no such file)");
  if (status.type() == std::filesystem::file_type::directory)
    throw TraceError(path.string() + ":0: file: cannot open (a directory)");
  if (const int fd = ::open(path.c_str(), O_RDONLY); fd >= 0)
    ::close(fd);
  else
    throw TraceError(path.string() + ":0: file: cannot open (" + std::strerror(errno) + ")");
}

std::string read_trace_file(const std::filesystem::path& path) {
  check_readable_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path.string() + ":0: file: cannot open");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<AppSpec> load_trace(const std::filesystem::path& path) { return parse_trace(read_trace_file(path), path.string()); }

std::string app_to_json_line(const AppSpec& app) {
  json j;
  j["name"] = app.name;
  j["arrival"] = app.arrival;
  j["scheme"] = std::string(to_string(app.scheme));
  if (app.max_job_gpus > 0) j["max_job_gpus"] = app.max_job_gpus;
  json jobs = json::array();
  for (const JobSpec& job : app.jobs) {
    json o;
    o["model"] = job.model;
    o["gpus"] = job.gpus;
    o["serial_iter_time"] = job.serial_iter_time;
    o["iterations"] = job.iterations;
    o["loss"] = {{"a", job.loss.a}, {"b", job.loss.b}, {"c", job.loss.c}};
    const ModelInfo* info = find_model(job.model);
    if (info == nullptr || info->slowdown != job.slowdown)
      o["slowdown"] = {job.slowdown[0], job.slowdown[1], job.slowdown[2], job.slowdown[3]};
    if (job.elastic) o["elastic"] = true;
    jobs.push_back(std::move(o));
  }
  j["jobs"] = std::move(jobs);
  return j.dump();
}

std::string trace_to_jsonl(const std::vector<AppSpec>& apps) {
  std::string out;
  for (const AppSpec& app : apps) out += app_to_json_line(app) + "\n";
  return out;
}

}  // namespace themis::sim
