// ThreadNames: which name a thread (or process) had at a given time, and
// which process a thread belongs to.
//
// Names come from the metadata's Thread and Process records (each carries
// the time it was learned: at start, or at a comm change/exec) and from
// ProcessEvent fork rows, which tie a child thread to its process. A name
// asked for before the first record is the first known one: a thread
// existed before the recorder saw it.
//
//   ThreadNames names(reader.metadata());
//   names.addFork(fork_row);                 // optional: ProcessEvent rows
//   std::string comm = names.threadName(43, t);   // "worker-1"
//   uint32_t pid = names.pidOf(43);               // 42 (0 if unknown)
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/event_kinds.h"
#include "format/metadata.h"

namespace incise::analyzer {

class ThreadNames {
 public:
  ThreadNames() = default;
  explicit ThreadNames(const format::Metadata& metadata);

  void addThread(uint32_t tid, uint32_t pid, const std::string& comm, uint64_t time);
  void addProcess(uint32_t pid, const std::string& comm, uint64_t time);
  // Fork rows give a child thread's process; other event types are ignored
  // (their names arrive as metadata).
  void addProcessEvent(const format::ProcessEvent& event);

  // "" when the thread was never named; falls back to its process's name.
  std::string threadName(uint32_t tid, uint64_t time) const;
  std::string processName(uint32_t pid, uint64_t time) const;
  // 0 when unknown.
  uint32_t pidOf(uint32_t tid) const;
  // Every tid that ever had a name (for --comm).
  std::vector<uint32_t> knownThreads() const;

 private:
  struct Named {
    uint64_t time;
    std::string name;
  };
  using History = std::vector<Named>;  // sorted by time
  static void insert(History& history, uint64_t time, const std::string& name);
  static const std::string* lookup(const History& history, uint64_t time);

  std::unordered_map<uint32_t, History> threads_;
  std::unordered_map<uint32_t, History> processes_;
  std::unordered_map<uint32_t, uint32_t> pid_of_;
};

}  // namespace incise::analyzer
