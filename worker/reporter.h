#pragma once
// Where a rank's per-iteration records go. record() must stay cheap (well under 1% of an iteration):
// implementations buffer and send in batches without blocking the training loop.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "worker/env.h"
#include "worker/report_format.h"

namespace themis::worker {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void record(const IterationRecord& record) = 0;
  // Events are rare and matter (start, checkpoint, exit): sent at once, with everything buffered before.
  virtual void event(const EventRecord& event) = 0;
  // Sends what is buffered; waits at most about a second for the transport.
  virtual void flush() = 0;
  // Records dropped because the transport could not keep up (0 for stdout).
  virtual std::uint64_t dropped() const { return 0; }
};

// JSON lines on stdout, flushed every `batch` records and on events.
std::unique_ptr<Reporter> make_stdout_reporter(std::string job, int rank, std::size_t batch = 64);

// ZeroMQ PUSH connected to `endpoint` (e.g. tcp://launcher:5601). Batches up to 64 records or 200 ms
// per message; never blocks the loop (sends with ZMQ_DONTWAIT, keeps up to 4 MiB pending, then drops).
// With `keys`, a CURVE client of a launcher's secured report socket (launcher/report_security.h).
std::unique_ptr<Reporter> make_zmq_reporter(std::string job, int rank, const std::string& endpoint,
                                            const ReportCurveKeys& keys = {});

// Discards everything (benchmarks).
std::unique_ptr<Reporter> make_null_reporter();

}  // namespace themis::worker
