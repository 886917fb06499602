// ProcessTracker: what the recorder knows about the processes it records —
// names, command lines, threads and memory maps — and which objects and
// kernel addresses their stacks hit. Everything is read lazily from
// /proc/PID/... the first time a pid shows up, again after exec, and again
// when a user frame falls outside every known mapping (a new mmap or
// dlopen). Files are opened through /proc/PID/root (or /proc/PID/map_files
// for deleted files), so processes in containers resolve.
//
// Facts go out as format::MetadataDelta batches:
//
//   tracker.notePid(pid, time);                 // first sighting reads /proc
//   tracker.noteUserFrames(pid, frames, time);  // maps the frames to objects
//   writer.addMetadata(tracker.takeDelta(now)); // in the main loop
//
// The symbol table of an object is read (and queued in the next delta) the
// first time a frame hits it, while the process and its root still exist.
// Symbol tables are the biggest thing the tracker holds: once the queued
// ones exceed setMetadataPressure's byte threshold it calls the handler,
// which writes them out (the recorder flushes the writer there).
//
// Objects with huge tables (libLLVM, libclang-cpp: 100k+ symbols, 15 MB of
// names, 40 MB while encoded) embed only the symbols their frames hit: the
// tracker keeps the hit file offsets and an open descriptor (so the file stays
// readable after the process and its root are gone) and reads the subset in
// readLargeObjects() at the end, one object at a time.
//
// Memory stays bounded on hosts where processes come and go: a process's
// maps, threads and perf-map position are dropped kExitedRetentionNs after
// its exit (late samples still drained from the rings find them until then).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "format/metadata.h"
#include "format/status.h"
#include "recorder/object_symbols.h"

namespace incise::recorder {

class ProcessTracker {
 public:
  // `proc_root` is "/proc" except in tests.
  explicit ProcessTracker(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  ~ProcessTracker();
  ProcessTracker(const ProcessTracker&) = delete;
  ProcessTracker& operator=(const ProcessTracker&) = delete;

  // Symbol tables with more entries than this are embedded as hit subsets.
  static constexpr size_t kFullSymbolTableLimit = 30000;
  // With frame-pointer stacks every frame is known while recording, so any
  // table past this small size is embedded as its hit subset: libc's 3,000
  // and libstdc++'s 6,000 symbols were most of a recording's metadata.
  // (-g dwarf keeps whole tables: its frames are found only offline.)
  static constexpr size_t kFramePointerFullTableLimit = 1000;
  void setFullSymbolTableLimit(size_t symbols) { full_table_limit_ = symbols; }
  // Large objects kept open at once; past this, later ones are re-read by path.
  static constexpr size_t kMaxOpenLargeObjects = 64;

  // First sighting of a process reads its comm, cmdline, ppid and maps.
  void notePid(uint32_t pid, uint64_t time);
  // First sighting of a thread reads its comm.
  void noteThread(uint32_t pid, uint32_t tid, uint64_t time);

  void onFork(uint32_t parent_pid, uint32_t child_pid, uint32_t child_tid, uint64_t time);
  void onExec(uint32_t pid, uint64_t time);
  void onComm(uint32_t pid, uint32_t tid, const std::string& comm, uint64_t time);
  void onExit(uint32_t pid, uint32_t tid, bool whole_process, uint64_t time);

  // Records which mapped object each frame hit; re-reads the maps (at most
  // once per frame-miss burst) when a frame is outside every known mapping.
  void noteUserFrames(uint32_t pid, std::span<const uint64_t> frames, uint64_t time);
  void noteKernelFrames(std::span<const uint64_t> frames);
  // -g dwarf / hybrid: also embed each hit object's .eh_frame (for offline CFI).
  void setEmbedUnwindTables(bool embed) { embed_unwind_tables_ = embed; }
  // -g dwarf / hybrid: note the objects that words of a stack copy point into
  // (return addresses): the frames the analyzer will unwind to.
  // `stack` was copied from `sp` up.
  void noteStackWords(uint32_t pid, uint64_t sp, std::span<const uint8_t> stack, uint64_t time);

  // At the end: queue the hit subsets of the large objects (see above).
  void readLargeObjects();
  size_t largeObjectCount() const { return large_objects_.size(); }

  // Metadata learned since the last call (empty if nothing new).
  format::MetadataDelta takeDelta(uint64_t time);
  // Drops the state of processes and threads that exited more than
  // kExitedRetentionNs before `time` (their facts are already in a delta).
  // Every kLivenessSweepNs it also checks that held processes still exist:
  // wakers outside the targets get no exit event.
  void forgetExited(uint64_t time);

  // `handler` runs (and should call takeDelta) whenever the symbol tables
  // queued for the next delta reach `bytes` (an estimate of their heap size).
  void setMetadataPressure(size_t bytes, std::function<void()> handler);
  size_t pendingObjectBytes() const { return pending_object_bytes_; }

  // How long an exited process's state is kept for samples still in flight.
  static constexpr uint64_t kExitedRetentionNs = 2'000'000'000;
  static constexpr uint64_t kLivenessSweepNs = 10'000'000'000;

  std::vector<HitObject> hitObjects() const;
  const std::set<uint64_t>& hitKernelAddresses() const { return kernel_addresses_; }
  // Pids whose state is held (for perf maps): live ones and those that
  // exited less than kExitedRetentionNs ago.
  std::vector<uint32_t> knownPids() const;
  size_t mappingCount(uint32_t pid) const;
  // Processes and threads held right now (bounded by the live ones).
  size_t processCount() const { return processes_.size(); }
  size_t threadCount() const;

 private:
  struct MappedRange {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t file_offset = 0;
    std::string path;
    std::string build_id;
    std::string open_path;
  };
  struct ProcessState {
    std::vector<MappedRange> ranges;  // sorted by start
    uint64_t maps_read_time = 0;
    bool alive = true;
    uint64_t exit_time = 0;  // when alive turned false
    // Tids seen (their comm was read); exited ones wait in exited_threads_.
    std::unordered_set<uint32_t> threads;
    // noteStackWords: pages of words that looked like code but were in no
    // executable mapping even after a re-read (heap, thread stacks).
    std::unordered_set<uint64_t> non_code_pages;
  };

  void readProcess(uint32_t pid, uint64_t time);
  void readMaps(uint32_t pid, ProcessState& state, uint64_t time);
  const MappedRange* findRange(const ProcessState& state, uint64_t address) const;
  std::string buildIdOf(const std::string& open_path, const std::string& path);
  std::string readSmallFile(const std::string& path) const;
  void queueObject(format::ObjectSymbols object);
  Result<format::ObjectSymbols> readHitObject(const HitObject& hit);
  // Starts a hit object: a whole table now, or a large object's subset later.
  void startHitObject(const std::string& key, const MappedRange& range, uint64_t address,
                      bool return_address);
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
  std::map<std::string, std::string> build_ids_;  // path -> build id (cache)
  std::map<std::string, HitObject> hit_objects_;  // key: build id or path
  struct LargeObject {
    HitObject hit;
    int fd = -1;
    std::unordered_set<uint64_t> file_offsets;  // of the frames that hit it
  };
  std::map<std::string, LargeObject> large_objects_;  // same key
  void noteHitOffset(LargeObject& large, const MappedRange& range, uint64_t address,
                     bool return_address);
  size_t full_table_limit_ = kFullSymbolTableLimit;
  std::set<uint64_t> kernel_addresses_;
  format::MetadataDelta pending_;
  size_t pending_object_bytes_ = 0;
  size_t pressure_bytes_ = 0;
  std::function<void()> pressure_handler_;
  bool embed_unwind_tables_ = false;
};

}  // namespace incise::recorder
