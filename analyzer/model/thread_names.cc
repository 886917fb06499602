#include "analyzer/model/thread_names.h"

#include <algorithm>

namespace incise::analyzer {

ThreadNames::ThreadNames(const format::Metadata& metadata) {
  for (const auto& process : metadata.processes) {
    addProcess(process.pid, process.comm, process.time);
    // A process's main thread has tid == pid even when no Thread record says so.
    if (!pid_of_.count(process.pid)) pid_of_[process.pid] = process.pid;
  }
  for (const auto& thread : metadata.threads) {
    addThread(thread.tid, thread.pid, thread.comm, thread.time);
  }
}

void ThreadNames::insert(History& history, uint64_t time, const std::string& name) {
  auto at = std::upper_bound(history.begin(), history.end(), time,
                             [](uint64_t t, const Named& n) { return t < n.time; });
  history.insert(at, Named{time, name});
}

const std::string* ThreadNames::lookup(const History& history, uint64_t time) {
  if (history.empty()) return nullptr;
  auto after = std::upper_bound(history.begin(), history.end(), time,
                                [](uint64_t t, const Named& n) { return t < n.time; });
  return after == history.begin() ? &history.front().name : &std::prev(after)->name;
}

void ThreadNames::addThread(uint32_t tid, uint32_t pid, const std::string& comm, uint64_t time) {
  if (!comm.empty()) insert(threads_[tid], time, comm);
  if (pid != 0) pid_of_[tid] = pid;
}

void ThreadNames::addProcess(uint32_t pid, const std::string& comm, uint64_t time) {
  if (!comm.empty()) insert(processes_[pid], time, comm);
}

void ThreadNames::addProcessEvent(const format::ProcessEvent& event) {
  if (event.event != static_cast<uint64_t>(format::ProcessEventType::kFork)) return;
  uint32_t child_tid = static_cast<uint32_t>(event.peer_tid);
  uint32_t child_pid = static_cast<uint32_t>(event.peer_pid);
  if (child_tid != 0 && child_pid != 0 && !pid_of_.count(child_tid)) pid_of_[child_tid] = child_pid;
}

std::string ThreadNames::threadName(uint32_t tid, uint64_t time) const {
  if (auto it = threads_.find(tid); it != threads_.end()) {
    if (const std::string* name = lookup(it->second, time)) return *name;
  }
  uint32_t pid = pidOf(tid);
  return pid != 0 ? processName(pid, time) : std::string();
}

std::string ThreadNames::processName(uint32_t pid, uint64_t time) const {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return std::string();
  const std::string* name = lookup(it->second, time);
  return name ? *name : std::string();
}

uint32_t ThreadNames::pidOf(uint32_t tid) const {
  auto it = pid_of_.find(tid);
  return it == pid_of_.end() ? 0 : it->second;
}

std::vector<uint32_t> ThreadNames::knownThreads() const {
  std::vector<uint32_t> tids;
  for (const auto& [tid, history] : threads_) tids.push_back(tid);
  for (const auto& [tid, pid] : pid_of_) tids.push_back(tid);
  std::sort(tids.begin(), tids.end());
  tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
  return tids;
}

}  // namespace incise::analyzer
