#include "coordinator/failure_class.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <sstream>

namespace themis::coordinator {
namespace {

std::string tail(const std::string& name) {
  std::ifstream in(std::string(THEMIS_TAILS_DIR) + "/" + name);
  if (!in) throw std::runtime_error("missing tail " + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Classification classify(int exit_code, int signal, const std::string& log, double seconds = 3) {
  ExitObservation e;
  e.exit_code = exit_code;
  e.signal = signal;
  e.log_tail = log;
  e.seconds_running = seconds;
  return classify_exit(e);
}

TEST(FailureClass, ThemisTrainBadOptionIsAUserError) {
  const auto c = classify(2, 0, tail("themis_train_bad_option.exit2.log"));
  EXPECT_EQ(c.failure_class, FailureClass::kUserError);
  EXPECT_NE(c.reason.find("exit 2"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("Could not convert: --lr = abc"), std::string::npos) << c.reason;
}

TEST(FailureClass, ThemisTrainBadEnvironmentIsAUserError) {
  const auto c = classify(78, 0, tail("themis_train_bad_rank.exit78.log"));
  EXPECT_EQ(c.failure_class, FailureClass::kUserError);
  EXPECT_NE(c.reason.find("THEMIS_RANK=5"), std::string::npos) << c.reason;
}

TEST(FailureClass, ThemisTrainWithAKilledPeerIsACommunicationFailure) {
  const auto c = classify(75, 0, tail("themis_train_peer_killed.exit75.log"), 40);
  EXPECT_EQ(c.failure_class, FailureClass::kCommunication);
  // The reason quotes the last line that says what happened.
  EXPECT_EQ(c.reason.rfind("exit 75: themis-train: rank 0: communication-failure", 0), 0u) << c.reason;
  // The same tail with a generic exit code is still recognised by its text.
  EXPECT_EQ(classify(1, 0, tail("themis_train_peer_killed.exit75.log"), 40).failure_class, FailureClass::kCommunication);
}

TEST(FailureClass, PythonImportErrorAtStartIsAUserError) {
  const auto c = classify(1, 0, tail("python_module_not_found.exit1.log"));
  EXPECT_EQ(c.failure_class, FailureClass::kUserError);
  EXPECT_NE(c.reason.find("ModuleNotFoundError: No module named 'torchvision_models_missing'"), std::string::npos) << c.reason;
}

TEST(FailureClass, PythonExceptionAfterIterationsIsNotAUserError) {
  const auto c = classify(1, 0, tail("python_key_error_after_iterations.exit1.log"));
  EXPECT_EQ(c.failure_class, FailureClass::kOther);
  EXPECT_NE(c.reason.find("KeyError: 'learning_rate'"), std::string::npos) << c.reason;
}

TEST(FailureClass, ExceptionLongAfterStartIsNotAUserErrorEvenWithoutIterationRecords) {
  // A launcher's workers report iterations over ZeroMQ, not in the log: the time run decides.
  const auto log = tail("python_module_not_found.exit1.log");
  EXPECT_EQ(classify(1, 0, log, kFirstIterationWindowSeconds - 1).failure_class, FailureClass::kUserError);
  EXPECT_EQ(classify(1, 0, log, kFirstIterationWindowSeconds + 1).failure_class, FailureClass::kOther);
}

TEST(FailureClass, PythonMemoryErrorIsOutOfMemory) {
  const auto c = classify(1, 0, tail("python_memory_error.exit1.log"));
  EXPECT_EQ(c.failure_class, FailureClass::kOutOfMemory);
  EXPECT_EQ(c.reason, "exit 1: MemoryError");
}

TEST(FailureClass, CxxBadAllocIsOutOfMemory) {
  const auto c = classify(-1, SIGABRT, tail("cxx_bad_alloc.sigabrt.log"));
  EXPECT_EQ(c.failure_class, FailureClass::kOutOfMemory);
  EXPECT_NE(c.reason.find("killed by signal 6 (SIGABRT)"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("std::bad_alloc"), std::string::npos) << c.reason;
}

TEST(FailureClass, SigkillNotOrderedByTheSchedulerIsTheOomKiller) {
  const auto c = classify(-1, SIGKILL, "{\"job\":\"3_0\",\"rank\":0,\"iter\":12,\"sec\":0.1,\"loss\":0.4}\n", 120);
  EXPECT_EQ(c.failure_class, FailureClass::kOutOfMemory);
  EXPECT_NE(c.reason.find("OOM killer"), std::string::npos) << c.reason;
  // A shell in between reports 128 + 9.
  EXPECT_EQ(classify(137, 0, "").failure_class, FailureClass::kOutOfMemory);
}

TEST(FailureClass, CudaOutOfMemoryInPytorchsFormatIsOutOfMemory) {
  const std::string log =
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 88, in <module>\n"
      "    loss = model(batch).sum()\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB "
      "of which 1.02 GiB is free.\n";
  const auto c = classify(1, 0, log);
  EXPECT_EQ(c.failure_class, FailureClass::kOutOfMemory);
  EXPECT_NE(c.reason.find("torch.OutOfMemoryError"), std::string::npos) << c.reason;
}

TEST(FailureClass, NcclErrorInPytorchsFormatIsACommunicationFailureNotAUserError) {
  const std::string log =
      "[rank1]: Traceback (most recent call last):\n"
      "[rank1]:   File \"train.py\", line 120, in step\n"
      "[rank1]:     dist.all_reduce(grad)\n"
      "[rank1]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited or "
      "there was a network error\n"
      "[rank1]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n";
  const auto c = classify(1, 0, log);
  EXPECT_EQ(c.failure_class, FailureClass::kCommunication);
}

TEST(FailureClass, OurOwnStopIsAPreemptionWhateverTheExit) {
  ExitObservation e;
  e.exit_code = 1;
  e.log_tail = "{\"job\":\"1_0\",\"rank\":0,\"iter\":40,\"event\":\"exit\",\"status\":\"preempted-unsaved\"}\n";
  e.stopped_by_scheduler = true;
  EXPECT_EQ(classify_exit(e).failure_class, FailureClass::kPreemption);
  e.exit_code = -1;
  e.signal = SIGKILL;  // the grace period ran out
  EXPECT_EQ(classify_exit(e).failure_class, FailureClass::kPreemption);
}

TEST(FailureClass, SigtermFromOutsideIsANodeFailure) {
  EXPECT_EQ(classify(-1, SIGTERM, "").failure_class, FailureClass::kNodeFailure);
  EXPECT_EQ(classify_node_loss("host a missed 3 heartbeats").failure_class, FailureClass::kNodeFailure);
}

TEST(FailureClass, FailureWithoutSignatureDependsOnProgress) {
  const auto quick = classify(3, 0, "loading data\n");
  EXPECT_EQ(quick.failure_class, FailureClass::kUserError);
  EXPECT_EQ(quick.reason, "exit 3: failed before its first iteration: loading data");
  EXPECT_EQ(classify(3, 0, "", 2).reason, "exit 3: failed before its first iteration: no output");
  // The start record (iteration 0) is not progress; iteration 1 is.
  EXPECT_EQ(classify(3, 0, "{\"job\":\"1_0\",\"rank\":0,\"iter\":0,\"event\":\"start\"}\n").failure_class,
            FailureClass::kUserError);
  EXPECT_EQ(classify(3, 0, "{\"job\":\"1_0\",\"rank\":0,\"iter\":1,\"sec\":0.2,\"loss\":1.0}\n").failure_class,
            FailureClass::kOther);
  EXPECT_EQ(classify(127, 0, "sh: 1: trian.py: not found\n").failure_class, FailureClass::kUserError);
  EXPECT_EQ(classify(-1, SIGSEGV, "", 5).failure_class, FailureClass::kUserError);
  EXPECT_EQ(classify(-1, SIGSEGV, "", 5000).failure_class, FailureClass::kOther);
}

TEST(FailureClass, RootCauseOrderPrefersMemoryAndUserErrorsOverTheirSymptoms) {
  EXPECT_TRUE(more_specific(FailureClass::kOutOfMemory, FailureClass::kCommunication));
  EXPECT_TRUE(more_specific(FailureClass::kUserError, FailureClass::kCommunication));
  EXPECT_FALSE(more_specific(FailureClass::kCommunication, FailureClass::kOutOfMemory));
  EXPECT_FALSE(more_specific(FailureClass::kCommunication, FailureClass::kCommunication));
}

TEST(FailureClass, NamesRoundTrip) {
  for (const auto c : kAllFailureClasses) EXPECT_EQ(failure_class_from_string(to_string(c)), c);
  EXPECT_FALSE(failure_class_from_string("oom").has_value());
  EXPECT_EQ(reason_code(FailureClass::kCommunication), "CommFailure");
}

}  // namespace
}  // namespace themis::coordinator
