// ProcThreads: whether a thread id is a live thread of a process, by /proc,
// for the lock owners the recorder reads from user memory (a futex wait's
// mutex __owner, an rwlock's __cur_writer, a joined tid): an owner is kept
// only if it is a thread of the waiter's process. Answers are kept, so an
// owner costs one access() per (process, thread).
//
//   ProcThreads threads;
//   if (!threads.isThreadOf(pid, owner)) owner = 0;
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace incise::recorder {

class ProcThreads {
 public:
  // `proc_root`: where procfs is mounted (tests pass another directory).
  explicit ProcThreads(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  bool isThreadOf(uint32_t pid, uint32_t tid);
  // A thread exited: its id may be reused by another process.
  void forget(uint32_t tid);

 private:
  std::string proc_root_;
  std::unordered_map<uint64_t, bool> known_;  // (pid << 32 | tid) -> answer
};

}  // namespace incise::recorder
