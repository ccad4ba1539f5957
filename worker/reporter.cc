#include "worker/reporter.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <optional>
#include <zmq.hpp>

namespace themis::worker {
namespace {

class StdoutReporter final : public Reporter {
 public:
  StdoutReporter(std::string job, int rank, std::size_t batch) : job_(std::move(job)), rank_(rank), batch_(batch) {}
  ~StdoutReporter() override { flush(); }
  void record(const IterationRecord& record) override {
    append_iteration_line(buffer_, job_, rank_, record);
    // The first iteration of a run goes out at once: it tells the launcher the job trains again.
    if (++pending_ >= batch_ || !first_sent_) flush();
    first_sent_ = true;
  }
  void event(const EventRecord& event) override {
    append_event_line(buffer_, job_, rank_, event);
    flush();
  }
  void flush() override {
    if (!buffer_.empty()) std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
    std::fflush(stdout);
    buffer_.clear();
    pending_ = 0;
  }

 private:
  std::string job_;
  int rank_;
  std::size_t batch_;
  std::size_t pending_ = 0;
  bool first_sent_ = false;
  std::string buffer_;
};

class ZmqPushReporter final : public Reporter {
 public:
  static constexpr std::size_t kBatchRecords = 64;
  static constexpr std::chrono::milliseconds kBatchAge{200};
  static constexpr std::size_t kMaxPendingBytes = std::size_t{4} << 20;

  ZmqPushReporter(std::string job, int rank, const std::string& endpoint, const ReportCurveKeys& keys)
      : job_(std::move(job)), rank_(rank), context_(1), socket_(context_, zmq::socket_type::push) {
    socket_.set(zmq::sockopt::sndhwm, 1000);
    socket_.set(zmq::sockopt::linger, 1000);  // on close, give queued reports a second to leave
    if (!keys.empty()) {
      socket_.set(zmq::sockopt::curve_serverkey, keys.server_key);
      socket_.set(zmq::sockopt::curve_publickey, keys.public_key);
      socket_.set(zmq::sockopt::curve_secretkey, keys.secret_key);
    }
    socket_.connect(endpoint);
  }
  ~ZmqPushReporter() override { flush(); }

  void record(const IterationRecord& record) override {
    if (batch_.size() > kMaxPendingBytes) {
      ++dropped_;  // the launcher is gone or far behind: losing samples beats stalling training
      return;
    }
    if (batch_.empty()) batch_started_ = std::chrono::steady_clock::now();
    append_iteration_line(batch_, job_, rank_, record);
    if (++batch_records_ >= kBatchRecords || std::chrono::steady_clock::now() - batch_started_ >= kBatchAge ||
        !first_sent_) {
      try_send();  // the first iteration of a run at once, as in StdoutReporter
    }
    first_sent_ = true;
  }
  void event(const EventRecord& event) override {
    append_event_line(batch_, job_, rank_, event);
    try_send();
  }
  void flush() override {
    // Bounded wait: a missing launcher must not keep a finished rank alive. A signal caught while it waits (a
    // second SIGTERM as the rank exits: its handler only sets a flag, worker/api.cc) interrupts the poll, and the
    // wait goes on to its deadline; any other ZeroMQ error gives the batch up. Either way flush() returns: it runs
    // in the destructor too, and a rank that has checkpointed must exit with its own status, not abort.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    try {
      while (!batch_.empty() && !try_send() && std::chrono::steady_clock::now() < deadline) {
        zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLOUT, 0};
        try {
          zmq::poll(&item, 1, std::chrono::milliseconds(50));
        } catch (const zmq::error_t& e) {
          if (e.num() != EINTR) throw;
        }
      }
    } catch (const zmq::error_t&) {
      dropped_ += batch_records_;
      batch_.clear();
      batch_records_ = 0;
    }
  }
  std::uint64_t dropped() const override { return dropped_; }

 private:
  bool try_send() {
    if (batch_.empty()) return true;
    std::optional<std::size_t> sent;
    try {
      sent = socket_.send(zmq::buffer(batch_), zmq::send_flags::dontwait);
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
    if (!sent) return false;  // EAGAIN or a signal: keep the batch and try again with the next record
    batch_.clear();
    batch_records_ = 0;
    return true;
  }

  std::string job_;
  int rank_;
  zmq::context_t context_;
  zmq::socket_t socket_;
  std::string batch_;
  std::size_t batch_records_ = 0;
  bool first_sent_ = false;
  std::chrono::steady_clock::time_point batch_started_{};
  std::uint64_t dropped_ = 0;
};

class NullReporter final : public Reporter {
 public:
  void record(const IterationRecord&) override {}
  void event(const EventRecord&) override {}
  void flush() override {}
};

}  // namespace

std::unique_ptr<Reporter> make_stdout_reporter(std::string job, int rank, std::size_t batch) {
  return std::make_unique<StdoutReporter>(std::move(job), rank, batch == 0 ? 1 : batch);
}

std::unique_ptr<Reporter> make_zmq_reporter(std::string job, int rank, const std::string& endpoint,
                                            const ReportCurveKeys& keys) {
  return std::make_unique<ZmqPushReporter>(std::move(job), rank, endpoint, keys);
}

std::unique_ptr<Reporter> make_null_reporter() { return std::make_unique<NullReporter>(); }

}  // namespace themis::worker
