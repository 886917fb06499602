// The schedule shared by the sched and offcpu tests, with its known answers.
//
//   t=0     cpu0: idle -> 101
//   t=1000  cpu0: 101 blocks (state 1, stack futex_wait<-lock<-main) -> 102
//   t=1500  102 wakes 101
//   t=1800  cpu1: idle -> 101                (migration cpu0 -> cpu1)
//   t=3000  cpu0: 102 preempted (state 0, stack spin<-main) -> idle
//   t=4000  cpu0: idle -> 102
//   end 5000
//
// 101: running 1000 + 3200 = 4200, blocked 500, runnable 300; 1 voluntary,
//      1 migration, 1 wake-up; off-CPU blocked 800 at futex_wait.
// 102: running 2000 + 1000 = 3000, runnable 1000; 1 involuntary;
//      off-CPU preempted 1000 at spin.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer::testing {

// kNewestFirst writes the same rows in reverse, for replays that must put
// them back in time order themselves (with one row per chunk, say).
enum class SchedRowOrder { kTimeOrder, kNewestFirst };

inline Result<std::string> writeSchedTrace(TraceBuilder& b,
                                           SchedRowOrder order = SchedRowOrder::kTimeOrder) {
  b.thread(101, "waiter");
  b.thread(102, "spinner");
  uint64_t blocked = b.stack({"futex_wait", "lock", "main"});
  uint64_t preempted = b.stack({"spin", "main"});
  std::vector<std::function<void()>> rows = {
      [&] { b.sched(0, 0, 0, 0, 101); },
      [&] { b.sched(1000, 0, 101, 1, 102, blocked); },
      [&] { b.wakeup(1500, 102, 101, 1); },
      [&] { b.sched(1800, 1, 0, 0, 101); },
      [&] { b.sched(3000, 0, 102, 0, 0, preempted); },
      [&] { b.sched(4000, 0, 0, 0, 102); },
  };
  if (order == SchedRowOrder::kNewestFirst) std::reverse(rows.begin(), rows.end());
  for (const auto& write : rows) write();
  b.setEnd(5000);
  return b.write();
}

}  // namespace incise::analyzer::testing
