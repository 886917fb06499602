// ProcessTracker: what the recorder knows about the processes it records —
// names, command lines, threads and executable mappings — and which objects
// and kernel addresses their stacks hit. A process is read from /proc/PID/...
// the first time it shows up (comm, cmdline, threads), again after exec.
//
// Mappings live in a MappingTable (recorder/metadata/mapping_table.h; other recorder
// parts subscribe to it through mappings()). With the kernel's mmap records
// flowing (recorder/sources/mmap_source.h calls useKernelRecords), a process that
// started while recording is known exactly from them, and /proc/PID/maps is
// read only for processes that were already running, once, at their first
// sighting (and again only if records were lost). Without them (an old
// kernel, perf events refused), the maps are read at the first sighting,
// after exec, and again when a user frame falls outside every known mapping.
// Files are opened through /proc/PID/root (or /proc/PID/map_files for
// deleted files), so processes in containers resolve.
//
// Facts go out as format::MetadataDelta batches; a process's mappings go out
// when it is first sighted (the ones it has then, with the times the kernel
// made them) and as they change afterwards:
//
//   tracker.notePid(pid, time);                 // first sighting reads /proc
//   tracker.noteUserFrames(pid, frames, time);  // maps the frames to objects
//   writer.addMetadata(tracker.takeDelta(now)); // in the main loop
//
// The objects and kernel addresses the stacks hit, and their symbol tables,
// are the tracker's SymbolHarvest (recorder/metadata/symbol_harvest.h,
// symbols()); takeDelta takes its queued tables with the rest.
//
// Memory stays bounded on hosts where processes come and go: a process's
// maps, threads and perf-map position are dropped kExitedRetentionNs after
// its exit (late samples still drained from the rings find them until then).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/status.h"
#include "format/metadata.h"
#include "recorder/metadata/build_id_cache.h"
#include "recorder/metadata/mapping_table.h"
#include "recorder/metadata/symbol_harvest.h"
#include "recorder/metadata/vdso_image.h"

namespace incise::recorder {

class ProcessTracker {
 public:
  // `proc_root` is "/proc" except in tests.
  explicit ProcessTracker(std::string proc_root = "/proc");
  ProcessTracker(const ProcessTracker&) = delete;
  ProcessTracker& operator=(const ProcessTracker&) = delete;

  // The executable mappings of every followed process; subscribe here.
  MappingTable& mappings() { return table_; }
  // What the stacks hit, and the symbol tables read for it.
  SymbolHarvest& symbols() { return symbols_; }
  const SymbolHarvest& symbols() const { return symbols_; }
  // The kernel's mmap records now feed mappings(): from `stream_start` on,
  // every mapping a followed process makes reaches the table through them.
  // `catch_up` applies the records the kernel has written so far (a frame
  // outside every known mapping calls it before anything else).
  void useKernelRecords(uint64_t stream_start, std::function<void()> catch_up);
  bool usesKernelRecords() const { return kernel_records_; }
  // The records' source is going away: the table keeps what it learned.
  void stopCatchUp() { catch_up_ = nullptr; }
  // Names every 64-bit process's [vdso] after the recorder's own image
  // (recorder/metadata/vdso_image.h): its frames then resolve like any object's.
  Status useVdsoImage();

  // First sighting of a process reads its comm, cmdline, ppid and (unless
  // the kernel's records already hold them) maps.
  void notePid(uint32_t pid, uint64_t time);
  // First sighting of a thread reads its comm.
  void noteThread(uint32_t pid, uint32_t tid, uint64_t time);

  void onFork(uint32_t parent_pid, uint32_t child_pid, uint32_t child_tid, uint64_t time);
  void onExec(uint32_t pid, uint64_t time);
  // `listener` runs on every exec a target makes, before the new image is read.
  void addExecListener(std::function<void(uint32_t pid)> listener) {
    exec_listeners_.push_back(std::move(listener));
  }
  // `listener` runs when a target process (all its threads) exits.
  void addExitListener(std::function<void(uint32_t pid)> listener) {
    exit_listeners_.push_back(std::move(listener));
  }
  void onComm(uint32_t pid, uint32_t tid, const std::string& comm, uint64_t time);
  void onExit(uint32_t pid, uint32_t tid, bool whole_process, uint64_t time);

  // Hands each frame's mapping to symbols(); re-reads the maps (at most
  // once per frame-miss burst) when a frame is outside every known mapping.
  void noteUserFrames(uint32_t pid, std::span<const uint64_t> frames, uint64_t time);
  // -g dwarf / hybrid: note the objects that words of a stack copy point into
  // (return addresses): the frames the analyzer will unwind to.
  // `stack` was copied from `sp` up.
  void noteStackWords(uint32_t pid, uint64_t sp, std::span<const uint8_t> stack, uint64_t time);

  // Metadata learned since the last call (empty if nothing new).
  format::MetadataDelta takeDelta(uint64_t time);
  // Drops the state of processes and threads that exited more than
  // kExitedRetentionNs before `time` (their facts are already in a delta).
  // Every kLivenessSweepNs it also checks that held processes still exist:
  // wakers outside the targets get no exit event.
  void forgetExited(uint64_t time);

  // How long an exited process's state is kept for samples still in flight.
  static constexpr uint64_t kExitedRetentionNs = 2'000'000'000;
  static constexpr uint64_t kLivenessSweepNs = 10'000'000'000;

  // Pids whose state is held (for perf maps): live ones and those that
  // exited less than kExitedRetentionNs ago.
  std::vector<uint32_t> knownPids() const;
  size_t mappingCount(uint32_t pid) const;
  // Processes and threads held right now (bounded by the live ones).
  size_t processCount() const { return processes_.size(); }
  size_t threadCount() const;

 private:
  struct ProcessState {
    uint64_t maps_read_time = 0;
    bool alive = true;
    uint64_t exit_time = 0;  // when alive turned false
    // Its mappings went into a delta (later ones follow as they come).
    bool mappings_written = false;
    // Tids seen (their comm was read); exited ones wait in exited_threads_.
    std::unordered_set<uint32_t> threads;
    // noteStackWords: pages of words that looked like code but were in no
    // executable mapping even after a re-read (heap, thread stacks).
    std::unordered_set<uint64_t> non_code_pages;
  };
  // Writes each new mapping of a process whose mappings were written.
  class MappingWriter final : public MappingObserver {
   public:
    explicit MappingWriter(ProcessTracker& tracker) : tracker_(tracker) {}
    void onMap(const ExecutableMapping& mapping) override;

   private:
    ProcessTracker& tracker_;
  };

  void readProcess(uint32_t pid, uint64_t time);
  void readIdentity(uint32_t pid, ProcessState& state, uint64_t time);
  // Reads /proc/PID/maps into the table (mappings stamped `stamp`).
  void readMaps(uint32_t pid, ProcessState& state, uint64_t stamp);
  void writeMappings(uint32_t pid, ProcessState& state);
  void queueMapping(const ExecutableMapping& mapping);
  // The mapping of `address`, catching up with the kernel's records and
  // re-reading /proc (rate-limited) when the table cannot know it otherwise.
  const ExecutableMapping* findMapping(uint32_t pid, ProcessState& state, uint64_t address,
                                       uint64_t time, uint64_t reread_interval);
  std::string readSmallFile(const std::string& path) const;
  void markExited(ProcessState& state, uint64_t time);

  std::string proc_root_;
  std::unordered_map<uint32_t, ProcessState> processes_;
  // Threads that exited while their process lives on: {pid, tid, exit time}.
  struct ExitedThread {
    uint32_t pid, tid;
    uint64_t time;
  };
  std::vector<ExitedThread> exited_threads_;
  uint64_t last_liveness_sweep_ = 0;
  BuildIdCache build_ids_;
  MappingTable table_;
  MappingWriter mapping_writer_{*this};
  bool kernel_records_ = false;  // the kernel's mmap records feed table_
  std::function<void()> catch_up_;
  std::optional<VdsoImage> vdso_;
  uint64_t stream_start_ = 0;
  SymbolHarvest symbols_;
  format::MetadataDelta pending_;
  std::vector<std::function<void(uint32_t pid)>> exec_listeners_;
  std::vector<std::function<void(uint32_t pid)>> exit_listeners_;
};

}  // namespace incise::recorder
