#include "worker/report_format.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace themis::worker {
namespace {

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out.append(buf);
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
}

template <typename T>
void append_number(std::string& out, T value) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc()) throw std::logic_error("number does not fit the report buffer");
  out.append(buf, end);
}

void append_prefix(std::string& out, std::string_view job, int rank, std::int64_t iteration) {
  out.append("{\"job\":");
  append_json_string(out, job);
  out.append(",\"rank\":");
  append_number(out, rank);
  out.append(",\"iter\":");
  append_number(out, iteration);
}

}  // namespace

void append_iteration_line(std::string& out, std::string_view job, int rank, const IterationRecord& record) {
  append_prefix(out, job, rank, record.iteration);
  out.append(",\"sec\":");
  append_number(out, record.seconds);  // shortest round-trip form
  out.append(",\"loss\":");
  if (std::isfinite(record.loss)) {
    append_number(out, record.loss);
  } else {
    out.append("null");  // JSON has no NaN; a diverged loss is reported as null
  }
  out.append("}\n");
}

void append_event_line(std::string& out, std::string_view job, int rank, const EventRecord& event) {
  append_prefix(out, job, rank, event.iteration);
  out.append(",\"event\":");
  append_json_string(out, event.event);
  for (const auto& [key, value] : event.fields) {
    out.push_back(',');
    append_json_string(out, key);
    out.push_back(':');
    append_json_string(out, value);
  }
  out.append("}\n");
}

Report parse_report_line(std::string_view line) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(std::string("report line: not JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument("report line: not a JSON object");
  auto require = [&](const char* key) -> const nlohmann::json& {
    if (!j.contains(key)) throw std::invalid_argument(std::string("report line: missing \"") + key + "\"");
    return j.at(key);
  };
  try {
    Report r;
    r.job = require("job").get<std::string>();
    r.rank = require("rank").get<int>();
    const auto iteration = require("iter").get<std::int64_t>();
    if (j.contains("event")) {
      EventRecord e;
      e.event = j.at("event").get<std::string>();
      e.iteration = iteration;
      for (const auto& [key, value] : j.items()) {
        if (key != "job" && key != "rank" && key != "iter" && key != "event") e.fields[key] = value.get<std::string>();
      }
      r.event = std::move(e);
    } else {
      IterationRecord rec;
      rec.iteration = iteration;
      rec.seconds = require("sec").get<double>();
      const auto& loss = require("loss");
      rec.loss = loss.is_null() ? std::numeric_limits<double>::quiet_NaN() : loss.get<double>();
      r.iteration = rec;
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("report line: wrong field type: ") + e.what());
  }
}

}  // namespace themis::worker
