#include "coordinator/failure_class.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <cstring>

namespace themis::coordinator {

namespace {

struct Signature {
  std::string_view text;  // matched case-insensitively
  FailureClass failure_class;
};

// Checked in this order: the first class with a match wins. Out of memory comes first because the
// peers of an OOM-killed rank report a lost connection; communication before exceptions because
// Python wraps Gloo/NCCL errors in a RuntimeError.
constexpr std::array kSignatures = {
    Signature{"CUDA out of memory", FailureClass::kOutOfMemory},
    Signature{"OutOfMemoryError", FailureClass::kOutOfMemory},
    Signature{"CUDA error: out of memory", FailureClass::kOutOfMemory},
    Signature{"CUBLAS_STATUS_ALLOC_FAILED", FailureClass::kOutOfMemory},
    Signature{"std::bad_alloc", FailureClass::kOutOfMemory},
    Signature{"MemoryError", FailureClass::kOutOfMemory},
    Signature{"Cannot allocate memory", FailureClass::kOutOfMemory},
    Signature{"out of memory", FailureClass::kOutOfMemory},
    Signature{"oom-kill", FailureClass::kOutOfMemory},
    Signature{"RESOURCE_EXHAUSTED", FailureClass::kOutOfMemory},
    Signature{"communication-failure", FailureClass::kCommunication},
    Signature{"Connection closed by peer", FailureClass::kCommunication},
    Signature{"Connection reset by peer", FailureClass::kCommunication},
    Signature{"NCCL error", FailureClass::kCommunication},
    Signature{"ncclInternalError", FailureClass::kCommunication},
    Signature{"ncclSystemError", FailureClass::kCommunication},
    Signature{"ncclRemoteError", FailureClass::kCommunication},
    Signature{"ncclUnhandledCudaError", FailureClass::kCommunication},
    Signature{"Watchdog caught collective operation timeout", FailureClass::kCommunication},
    Signature{"DistNetworkError", FailureClass::kCommunication},
    Signature{"DistBackendError", FailureClass::kCommunication},
    Signature{"rendezvous failed", FailureClass::kCommunication},
    Signature{"gloo/transport", FailureClass::kCommunication},
    Signature{"ProcessGroupGloo", FailureClass::kCommunication},
    Signature{"ProcessGroupNCCL", FailureClass::kCommunication},
};

// Exceptions and crashes: a user error before the first iteration, "other" after it.
constexpr std::array<std::string_view, 8> kExceptionSignatures = {
    "Traceback (most recent call last)", "terminate called after throwing", "Error:", "Exception:",
    "Segmentation fault", "core dumped", "Aborted", "panicked at"};

bool contains_nocase(std::string_view haystack, std::string_view needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         }) != haystack.end();
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The last line of `tail` holding `needle` (the final message is the most telling), trimmed, at most
// 200 characters.
std::string line_with(std::string_view tail, std::string_view needle) {
  const auto offset = lowercase(tail).rfind(lowercase(needle));
  if (offset == std::string::npos) return std::string(needle);
  const auto begin = tail.rfind('\n', offset);
  const auto end = tail.find('\n', offset);
  const std::size_t from = begin == std::string_view::npos ? 0 : begin + 1;
  std::string line(tail.substr(from, (end == std::string_view::npos ? tail.size() : end) - from));
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  const auto first = line.find_first_not_of(" \t");
  line = first == std::string::npos ? std::string() : line.substr(first);
  if (line.size() > 200) line = line.substr(0, 197) + "...";
  return line;
}

// The last non-empty line of the tail, for failures without a signature.
std::string last_line(std::string_view tail) {
  while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.remove_suffix(1);
  const auto begin = tail.rfind('\n');
  std::string line(tail.substr(begin == std::string_view::npos ? 0 : begin + 1));
  if (line.size() > 200) line = line.substr(0, 197) + "...";
  return line;
}

// An iteration record of the worker's report format ({"job":..,"iter":N,"sec":..}, also as Python's
// json.dumps writes it, with a space) with N > 0: the job trained at least one step in this attempt.
bool reported_an_iteration(std::string_view tail) {
  std::size_t at = 0;
  while ((at = tail.find("\"iter\":", at)) != std::string_view::npos) {
    at += 7;
    while (at < tail.size() && tail[at] == ' ') ++at;
    std::size_t end = tail.find('\n', at);
    if (end == std::string_view::npos) end = tail.size();
    const std::string_view rest = tail.substr(at, end - at);
    std::size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    const bool positive = digits > 0 && rest.substr(0, digits).find_first_not_of('0') != std::string_view::npos;
    const auto line_start = tail.rfind('\n', at);
    const std::string_view line =
        tail.substr(line_start == std::string_view::npos ? 0 : line_start + 1, end - (line_start == std::string_view::npos ? 0 : line_start + 1));
    if (positive && line.find("\"event\"") == std::string_view::npos) return true;
  }
  return false;
}

std::string status_text(const ExitObservation& e) {
  if (e.signal != 0) {
    const char* name = ::sigabbrev_np(e.signal);
    return "killed by signal " + std::to_string(e.signal) + (name ? std::string(" (SIG") + name + ")" : std::string());
  }
  return "exit " + std::to_string(e.exit_code);
}

Classification make(FailureClass c, const ExitObservation& e, const std::string& what) {
  return {c, status_text(e) + ": " + what};
}

}  // namespace

std::string_view to_string(FailureClass c) {
  switch (c) {
    case FailureClass::kUserError: return "user_error";
    case FailureClass::kOutOfMemory: return "out_of_memory";
    case FailureClass::kCommunication: return "communication";
    case FailureClass::kNodeFailure: return "node_failure";
    case FailureClass::kPreemption: return "preemption";
    case FailureClass::kOther: return "other";
  }
  return "other";
}

std::optional<FailureClass> failure_class_from_string(std::string_view name) {
  for (const auto c : kAllFailureClasses) {
    if (to_string(c) == name) return c;
  }
  return std::nullopt;
}

std::string_view reason_code(FailureClass c) {
  switch (c) {
    case FailureClass::kUserError: return "UserError";
    case FailureClass::kOutOfMemory: return "OutOfMemory";
    case FailureClass::kCommunication: return "CommFailure";
    case FailureClass::kNodeFailure: return "NodeFail";
    case FailureClass::kPreemption: return "Preempted";
    case FailureClass::kOther: return "Failed";
  }
  return "Failed";
}

Classification classify_exit(const ExitObservation& e) {
  if (e.stopped_by_scheduler) return make(FailureClass::kPreemption, e, "stopped by the scheduler");
  const std::string_view tail = e.log_tail;
  for (const auto& s : kSignatures) {
    if (s.failure_class == FailureClass::kOutOfMemory && contains_nocase(tail, s.text)) {
      return make(FailureClass::kOutOfMemory, e, line_with(tail, s.text));
    }
  }
  // Nothing but the kernel's OOM killer sends SIGKILL to a worker the scheduler did not stop (the
  // nodelet's own SIGKILL after a grace period follows a Stop, which is handled above).
  if (e.signal == SIGKILL || (e.signal == 0 && e.exit_code == 128 + SIGKILL)) {
    return make(FailureClass::kOutOfMemory, e, "SIGKILL without a stop from the scheduler (the kernel's OOM killer)");
  }
  if (e.signal == 0 && e.exit_code == 75) {
    std::string what = "communication failure (EX_TEMPFAIL)";
    for (const auto& s : kSignatures) {
      if (s.failure_class == FailureClass::kCommunication && contains_nocase(tail, s.text)) {
        what = line_with(tail, s.text);
        break;
      }
    }
    return make(FailureClass::kCommunication, e, what);
  }
  for (const auto& s : kSignatures) {
    if (s.failure_class == FailureClass::kCommunication && contains_nocase(tail, s.text)) {
      return make(FailureClass::kCommunication, e, line_with(tail, s.text));
    }
  }
  if (e.signal == SIGTERM || e.signal == SIGINT || e.signal == SIGHUP) {
    return make(FailureClass::kNodeFailure, e, "terminated from outside the scheduler (host shutdown?)");
  }
  if (e.signal == 0) {
    switch (e.exit_code) {
      case 2: return make(FailureClass::kUserError, e, "bad command line or hyper-parameter (" + last_line(tail) + ")");
      case 78: return make(FailureClass::kUserError, e, "bad configuration, EX_CONFIG (" + last_line(tail) + ")");
      case 126: return make(FailureClass::kUserError, e, "command not executable (" + last_line(tail) + ")");
      case 127: return make(FailureClass::kUserError, e, "command not found (" + last_line(tail) + ")");
      default: break;
    }
  }
  const bool progressed = reported_an_iteration(tail) || e.seconds_running >= kFirstIterationWindowSeconds;
  std::string evidence;
  for (const auto text : kExceptionSignatures) {
    if (contains_nocase(tail, text)) {
      evidence = line_with(tail, text);
      // A Python traceback names the exception on its last line.
      if (text == kExceptionSignatures[0]) evidence = last_line(tail);
      break;
    }
  }
  if (evidence.empty()) evidence = last_line(tail).empty() ? "no output" : last_line(tail);
  if (!progressed) return make(FailureClass::kUserError, e, "failed before its first iteration: " + evidence);
  return make(FailureClass::kOther, e, evidence);
}

Classification classify_node_loss(std::string_view what) { return {FailureClass::kNodeFailure, std::string(what)}; }

bool more_specific(FailureClass candidate, FailureClass current) {
  auto rank = [](FailureClass c) {
    switch (c) {
      case FailureClass::kPreemption: return 0;
      case FailureClass::kCommunication: return 1;
      case FailureClass::kNodeFailure: return 2;
      case FailureClass::kOther: return 3;
      case FailureClass::kUserError: return 4;
      case FailureClass::kOutOfMemory: return 5;
    }
    return 0;
  };
  return rank(candidate) > rank(current);
}

}  // namespace themis::coordinator
