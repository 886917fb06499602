// RecordedThreads: which threads the recorder followed, as opposed to
// bystanders — threads seen only as the other side of a followed thread's
// switch or wake-up.
//
// The scheduler source records a switch when either side is a target, so a
// `-p`, `-- CMD` or `--cgroup` trace also holds switches of unrelated tasks:
// the one that ran after a target on its CPU, or before it. Of such a task
// only those instants are known; between them it may have run, slept or
// migrated anywhere unseen, so it has no state to count.
//
// A trace of the whole box (`-a`) follows everything. Otherwise a process
// was followed when the trace shows it was a target: the recorder described
// it (the metadata's processes and threads, written for every target it
// sees: -p pids, the command, forked children, processes sampled or
// switched with a stack), a process event names it (fork, exec, exit,
// comm: recorded only for targets; a fork's child is one), or `-p` listed
// it. Traces that do not say what they recorded (older or synthetic ones)
// count every thread as followed.
//
//   RecordedThreads recorded = RecordedThreads::of(trace);
//   if (!recorded.followed(row.next_pid)) ...   // a bystander
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>

namespace incise::analyzer {

class Trace;

class RecordedThreads {
 public:
  // Every process followed.
  RecordedThreads() = default;
  static RecordedThreads of(Trace& trace);

  bool followed(uint32_t pid) const { return all_ || pids_.count(pid) != 0; }
  bool followsEverything() const { return all_; }

  // For traces built by hand: only these processes were followed.
  static RecordedThreads only(std::unordered_set<uint32_t> pids);

 private:
  bool all_ = true;
  std::unordered_set<uint32_t> pids_;
};

}  // namespace incise::analyzer
