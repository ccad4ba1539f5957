#pragma once
// The cut bound (cut_bound.h) of an auction's PF problem on a thread of its own, beside the PF solve, for auctions with a
// time budget and a second thread: the second thread idles while the PF solve runs, and at 200 bidders the LP alone
// took more than the sixteenth of the budget the cuts had after it (docs/performance.md, "The cut bound beside the PF
// solve").
//
// The thread waits `start_after` seconds first (none where ≤ 0), so that the PF solves proven within them cost no LP (the
// gang auctions at 20 and 50 bidders prove theirs in a few to a few tens of milliseconds); it then runs until its rounds
// are done or `end_after` seconds from construction have passed (the PF solve's half of the budget), or until cancel().
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "policy/arbiter/cut_bound.h"
#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

class CutBoundBeside {
 public:
  // `problem` must outlive the object.
  CutBoundBeside(const PackingProblem& problem, double start_after, double end_after);
  ~CutBoundBeside();  // cancel(), and waits for the thread
  CutBoundBeside(const CutBoundBeside&) = delete;
  CutBoundBeside& operator=(const CutBoundBeside&) = delete;

  // The PF solve has ended unproven: waits for the thread to end (its LP's solves stop at `end_after`; a round's cut
  // generation in progress then runs to its end) and returns its bound; nothing where it had not started (it never
  // does now).
  std::optional<CutBound> finish();
  // The PF solve has ended proven: the thread stops within an LP iteration, or once the round's cuts in progress are
  // generated, without being waited for here (the destructor does; the winners' solves need not); or never starts.
  void cancel();

 private:
  void run(double start_after, const PackingProblem& problem);
  void end_wait();  // a thread still waiting to start never does

  const Deadline end_;  // counts from construction
  std::mutex mutex_;
  std::condition_variable pf_ended_signal_;
  bool pf_ended_ = false;  // under mutex_
  bool started_;           // the thread's (at once where start_after ≤ 0), read after it is joined
  CutBound bound_;         // the same
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace themis::arbiter
