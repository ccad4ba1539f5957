// A rank's report socket under signals: a worker catches SIGTERM with a handler that only sets a flag
// (worker/api.cc), so a second signal while the rank exits lands in the reporter's final flush.
#include "worker/reporter.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

namespace themis::worker {
namespace {

std::atomic<int> g_caught{0};
extern "C" void count_signal(int) { g_caught.fetch_add(1); }

// No launcher listens on the endpoint, so flush() waits its full second for the transport; signals sent to
// the flushing thread throughout interrupt its poll. flush() must neither throw nor abort, and must still give
// up at its deadline.
TEST(ReporterSignals, ASignalDuringTheFinalFlushNeitherThrowsNorAbortsAndTheWaitStaysBounded) {
  struct sigaction action {};
  struct sigaction previous {};
  action.sa_handler = count_signal;
  sigemptyset(&action.sa_mask);  // no SA_RESTART, as the worker's own handler
  ASSERT_EQ(::sigaction(SIGUSR1, &action, &previous), 0);

  // Nobody listens there: the socket queues up to its high-water mark of 1,000 messages, every event is one,
  // and the events past the mark stay in the batch for flush().
  auto reporter = make_zmq_reporter("7_0@1", 0, "tcp://127.0.0.1:9");
  for (int i = 0; i < 1100; ++i) reporter->event({"checkpoint", i, {}});

  const pthread_t flushing = pthread_self();
  std::atomic<bool> done{false};
  std::thread sender([&] {
    while (!done.load()) {
      pthread_kill(flushing, SIGUSR1);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(reporter->flush());
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_NO_THROW(reporter.reset());  // the destructor flushes again
  done.store(true);
  sender.join();
  ::sigaction(SIGUSR1, &previous, nullptr);

  EXPECT_GT(g_caught.load(), 10) << "the signals must have reached the flushing thread";
  EXPECT_LT(waited, std::chrono::seconds(10)) << "flush() gives up after about a second, signals or not";
}

}  // namespace
}  // namespace themis::worker
