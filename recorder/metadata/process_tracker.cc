#include "recorder/metadata/process_tracker.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "recorder/metadata/eh_frame_collector.h"
#include "recorder/metadata/proc_maps.h"

namespace incise::recorder {

namespace {

// A frame outside every known mapping re-reads the maps at most this often
// (a broken frame-pointer walk yields garbage addresses; do not chase each).
constexpr uint64_t kMapsRereadIntervalNs = 1'000'000'000;

std::string trimNewline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

uint64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

std::string ProcessTracker::readSmallFile(const std::string& path) const {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void ProcessTracker::notePid(uint32_t pid, uint64_t time) {
  if (pid == 0) return;
  auto it = processes_.find(pid);
  if (it != processes_.end()) {
    // A sample of the exited process may still arrive (it is older than the
    // exit); a later event under that pid is a new process reusing it. The
    // kernel's records say so exactly (a fork after the exit); without them,
    // any later event counts (the dying task's last switch comes after its
    // exit event, and reads the process again).
    const ProcessState& state = it->second;
    if (state.alive || time <= state.exit_time) return;
    if (kernel_records_) {
      if (catch_up_) catch_up_();
      if (!table_.alive(pid) || table_.imageTime(pid) <= state.exit_time) return;
    }
    processes_.erase(it);
  }
  readProcess(pid, time);
}

void ProcessTracker::noteThread(uint32_t pid, uint32_t tid, uint64_t time) {
  notePid(pid, time);
  auto it = processes_.find(pid);
  if (tid == 0 || it == processes_.end() || !it->second.alive) return;
  if (!it->second.threads.insert(tid).second) return;
  std::string comm = trimNewline(readSmallFile(proc_root_ + "/" + std::to_string(pid) + "/task/" +
                                               std::to_string(tid) + "/comm"));
  pending_.threads.push_back(format::Thread{.tid = tid, .pid = pid, .comm = comm, .time = time});
}

ProcessTracker::ProcessTracker(std::string proc_root) : proc_root_(std::move(proc_root)) {
  table_.subscribe(&mapping_writer_);
}

void ProcessTracker::useKernelRecords(uint64_t stream_start, std::function<void()> catch_up) {
  stream_start_ = stream_start;
  kernel_records_ = true;
  catch_up_ = std::move(catch_up);
}

Status ProcessTracker::useVdsoImage() {
  Result<VdsoImage> image = VdsoImage::ofThisProcess();
  if (!image) return image.error();
  vdso_.emplace(image.take());
  table_.setVdso(table_.object("[vdso]", vdso_->buildId(), vdso_->path()));
  return Status::ok();
}

void ProcessTracker::readProcess(uint32_t pid, uint64_t time) {
  ProcessState& state = processes_[pid];
  readIdentity(pid, state, time);
  // Mappings the kernel's records made known need no /proc read (they are
  // exact, where /proc races the dynamic loader), and they are written even
  // when the process is already gone (a short one, seen late).
  if (catch_up_) catch_up_();
  if (state.alive && (!kernel_records_ || !table_.complete(pid)))
    readMaps(pid, state, kernel_records_ ? stream_start_ : time);
  writeMappings(pid, state);
}

void ProcessTracker::readIdentity(uint32_t pid, ProcessState& state, uint64_t time) {
  std::string dir = proc_root_ + "/" + std::to_string(pid);
  std::string comm = readSmallFile(dir + "/comm");
  if (comm.empty()) {
    // Gone before we looked (a late sample): hold an empty state, which
    // forgetExited drops, rather than write a nameless process.
    markExited(state, time);
    return;
  }
  format::Process process{.pid = pid, .time = time};
  process.comm = trimNewline(std::move(comm));
  std::string cmdline = readSmallFile(dir + "/cmdline");
  for (size_t start = 0; start < cmdline.size();) {
    size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    process.cmdline.push_back(cmdline.substr(start, end - start));
    start = end + 1;
  }
  // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and ')'.
  std::string stat = readSmallFile(dir + "/stat");
  size_t paren = stat.rfind(')');
  if (paren != std::string::npos) {
    std::istringstream rest(stat.substr(paren + 1));
    std::string state_letter;
    rest >> state_letter >> process.ppid;
  }
  pending_.processes.push_back(process);

  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/task", ec)) {
    uint32_t tid = 0;
    std::string name = entry.path().filename().string();
    if (std::from_chars(name.data(), name.data() + name.size(), tid).ec != std::errc()) continue;
    if (!state.threads.insert(tid).second) continue;
    std::string thread_comm = trimNewline(readSmallFile(entry.path().string() + "/comm"));
    pending_.threads.push_back(
        format::Thread{.tid = tid, .pid = pid, .comm = thread_comm, .time = time});
  }
}

void ProcessTracker::markExited(ProcessState& state, uint64_t time) {
  state.alive = false;
  state.exit_time = time;
}

void ProcessTracker::readMaps(uint32_t pid, ProcessState& state, uint64_t stamp) {
  // Taken before the read: records older than it say nothing the read missed.
  const uint64_t read_time = monotonicNs();
  table_.loadSnapshot(pid, readProcMaps(proc_root_, pid, stamp, table_, build_ids_),
                      std::max(read_time, stamp));
  state.maps_read_time = stamp;
}

void ProcessTracker::queueMapping(const ExecutableMapping& mapping) {
  pending_.mappings.push_back(format::Mapping{.pid = mapping.pid,
                                              .start = mapping.start,
                                              .end = mapping.end,
                                              .file_offset = mapping.file_offset,
                                              .path = mapping.object->path,
                                              .build_id = mapping.object->build_id,
                                              .prot = mapping.prot,
                                              .time = mapping.time});
}

void ProcessTracker::writeMappings(uint32_t pid, ProcessState& state) {
  if (state.mappings_written) return;
  state.mappings_written = true;
  if (const std::vector<ExecutableMapping>* mappings = table_.mappingsOf(pid)) {
    for (const ExecutableMapping& mapping : *mappings) queueMapping(mapping);
  }
}

void ProcessTracker::MappingWriter::onMap(const ExecutableMapping& mapping) {
  auto it = tracker_.processes_.find(mapping.pid);
  if (it != tracker_.processes_.end() && it->second.mappings_written)
    tracker_.queueMapping(mapping);
}

const ExecutableMapping* ProcessTracker::findMapping(uint32_t pid, ProcessState& state,
                                                     uint64_t address, uint64_t time,
                                                     uint64_t reread_interval) {
  if (const ExecutableMapping* mapping = table_.find(pid, address)) return mapping;
  if (kernel_records_) {
    // The record of a mapping is written before the mmap returns, so before
    // any sample inside it: whatever the rings hold now covers the frame.
    if (catch_up_) catch_up_();
    if (const ExecutableMapping* mapping = table_.find(pid, address)) return mapping;
    // Complete: the address is in no mapping (a garbage frame).
    if (table_.complete(pid)) return nullptr;
  }
  if (!state.alive || time - state.maps_read_time <= reread_interval) return nullptr;
  readMaps(pid, state, time);
  return table_.find(pid, address);
}

void ProcessTracker::onFork(uint32_t parent_pid, uint32_t child_pid, uint32_t child_tid,
                            uint64_t time) {
  if (child_pid != parent_pid) {
    notePid(child_pid, time);
  } else {
    noteThread(child_pid, child_tid, time);
  }
}

void ProcessTracker::onExec(uint32_t pid, uint64_t time) {
  // A new image: its name and threads are read again. With the kernel's
  // records the table already follows the exec (their exec record comes
  // before the new image's mappings, this event after them); without them
  // the maps are read again too.
  for (const auto& listener : exec_listeners_) listener(pid);
  auto it = processes_.find(pid);
  if (it == processes_.end()) {
    readProcess(pid, time);
    return;
  }
  ProcessState& state = it->second;
  state.threads.clear();
  state.non_code_pages.clear();
  state.alive = true;
  readIdentity(pid, state, time);
  if (!kernel_records_ && state.alive) {
    table_.exec(pid, time);
    readMaps(pid, state, time);  // MappingWriter writes what it finds
  }
}

void ProcessTracker::onComm(uint32_t pid, uint32_t tid, const std::string& comm, uint64_t time) {
  auto it = processes_.find(pid);
  if (it != processes_.end()) it->second.threads.insert(tid);
  pending_.threads.push_back(format::Thread{.tid = tid, .pid = pid, .comm = comm, .time = time});
}

void ProcessTracker::onExit(uint32_t pid, uint32_t tid, bool whole_process, uint64_t time) {
  if (whole_process) {
    table_.exit(pid, time);
    for (const auto& listener : exit_listeners_) listener(pid);
  }
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  if (whole_process) {
    markExited(it->second, time);
  } else {
    exited_threads_.push_back(ExitedThread{.pid = pid, .tid = tid, .time = time});
  }
}

void ProcessTracker::forgetExited(uint64_t time) {
  if (time - last_liveness_sweep_ >= kLivenessSweepNs) {
    last_liveness_sweep_ = time;
    auto vanished = [&](uint32_t pid) {
      return access((proc_root_ + "/" + std::to_string(pid)).c_str(), F_OK) != 0;
    };
    for (auto& [pid, state] : processes_) {
      if (state.alive && vanished(pid)) markExited(state, time);
    }
    // Followed but never sighted (-a): their exits may have gone unseen too.
    for (uint32_t pid : table_.pids()) {
      if (table_.alive(pid) && vanished(pid)) table_.markVanished(pid, time);
    }
  }
  table_.forgetExited(time);
  std::erase_if(processes_, [&](const auto& entry) {
    const ProcessState& state = entry.second;
    return !state.alive && time > state.exit_time + kExitedRetentionNs;
  });
  std::erase_if(exited_threads_, [&](const ExitedThread& thread) {
    if (time <= thread.time + kExitedRetentionNs) return false;
    auto it = processes_.find(thread.pid);
    if (it != processes_.end()) it->second.threads.erase(thread.tid);
    return true;
  });
}

size_t ProcessTracker::threadCount() const {
  size_t count = 0;
  for (const auto& [pid, state] : processes_) count += state.threads.size();
  return count;
}

void ProcessTracker::noteUserFrames(uint32_t pid, std::span<const uint64_t> frames, uint64_t time) {
  if (frames.empty() || pid == 0) return;
  notePid(pid, time);
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  ProcessState& state = it->second;
  SymbolHarvest::StackCursor cursor;
  for (size_t i = 0; i < frames.size(); ++i) {
    // A re-read of the maps may replace earlier frames' mappings (not their objects).
    const ExecutableMapping* range =
        findMapping(pid, state, frames[i], time, kMapsRereadIntervalNs);
    if (!range || readablePath(*range).empty()) continue;
    symbols_.noteUserFrame({.mapping = range, .address = frames[i], .return_address = i > 0},
                           cursor);
  }
}

void ProcessTracker::noteStackWords(uint32_t pid, uint64_t sp, std::span<const uint8_t> stack,
                                    uint64_t time) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  // Words inside a known executable mapping are return-address candidates.
  // A word that looks like a library address (the mmap area, far from the
  // stack itself) but hits no known mapping means the maps are stale (a
  // library loaded after we read them): re-read, at most once per interval.
  ProcessState& state = it->second;
  // Pointers into the thread's own stack (8 MiB by default) are not code.
  constexpr uint64_t kStackReach = 16u << 20;
  // A library loaded right after exec must be known before a short program ends.
  constexpr uint64_t kStaleRereadIntervalNs = 50'000'000;
  constexpr size_t kMaxNonCodePages = 1u << 16;
  std::vector<uint64_t> code;
  std::vector<uint64_t> unknown;
  for (int pass = 0; pass < 2; ++pass) {
    code.clear();
    unknown.clear();
    for (size_t at = 0; at + sizeof(uint64_t) <= stack.size(); at += sizeof(uint64_t)) {
      uint64_t word = 0;
      std::memcpy(&word, stack.data() + at, sizeof(word));
      const ExecutableMapping* range = table_.find(pid, word);
      if (range != nullptr) {
        if (!readablePath(*range).empty()) code.push_back(word);
      } else if (word >= 0x7f0000000000ull && word < 0x800000000000ull &&
                 (word + kStackReach < sp || word > sp + kStackReach) &&
                 !state.non_code_pages.count(word >> 12)) {
        unknown.push_back(word);
      }
    }
    if (pass == 1 || unknown.empty()) break;
    if (kernel_records_) {
      // The kernel's records say exactly what is mapped: catch up with them
      // and look once more; no /proc read unless records were lost.
      if (catch_up_) catch_up_();
      if (table_.complete(pid)) continue;
    }
    if (!state.alive || time - state.maps_read_time <= kStaleRereadIntervalNs) break;
    readMaps(pid, state, time);
  }
  // Still unknown after a fresh read: data, not code; do not re-read for them again.
  const bool exact = kernel_records_ && table_.complete(pid);
  if ((exact || time == state.maps_read_time) && state.non_code_pages.size() < kMaxNonCodePages) {
    for (uint64_t word : unknown) {
      if (table_.find(pid, word) == nullptr) state.non_code_pages.insert(word >> 12);
    }
  }
  noteUserFrames(pid, code, time);
}

format::MetadataDelta ProcessTracker::takeDelta(uint64_t time) {
  format::MetadataDelta delta = std::move(pending_);
  pending_ = format::MetadataDelta();
  symbols_.takeQueued(delta);
  delta.time = time;
  return delta;
}

std::vector<uint32_t> ProcessTracker::knownPids() const {
  std::vector<uint32_t> out;
  for (const auto& [pid, state] : processes_) out.push_back(pid);
  std::sort(out.begin(), out.end());
  return out;
}

size_t ProcessTracker::mappingCount(uint32_t pid) const {
  const std::vector<ExecutableMapping>* mappings = table_.mappingsOf(pid);
  return mappings ? mappings->size() : 0;
}

}  // namespace incise::recorder
