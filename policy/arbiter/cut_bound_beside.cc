#include "policy/arbiter/cut_bound_beside.h"

#include <chrono>

namespace themis::arbiter {

CutBoundBeside::CutBoundBeside(const PackingProblem& problem, double start_after, double end_after)
    : end_(end_after), started_(start_after <= 0), thread_([this, start_after, &problem] { run(start_after, problem); }) {}

CutBoundBeside::~CutBoundBeside() {
  cancel();
  if (thread_.joinable()) thread_.join();
}

void CutBoundBeside::run(double start_after, const PackingProblem& problem) {
  if (start_after > 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (pf_ended_signal_.wait_for(lock, std::chrono::duration<double>(start_after), [this] { return pf_ended_; })) return;
    started_ = true;
  }
  bound_ = cut_bound(problem, end_, CutBound::kDefaultRounds, &stop_);
}

void CutBoundBeside::end_wait() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    pf_ended_ = true;
  }
  pf_ended_signal_.notify_one();
}

std::optional<CutBound> CutBoundBeside::finish() {
  end_wait();
  if (thread_.joinable()) thread_.join();
  if (!started_) return std::nullopt;
  return std::move(bound_);
}

void CutBoundBeside::cancel() {
  stop_ = true;
  end_wait();
}

}  // namespace themis::arbiter
