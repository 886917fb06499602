// UnwindTableLoader: keeps the in-kernel unwinder's tables (bpf/unwind.bpf.h)
// filled for every process whose stacks the BPF programs walk.
//
// The programs report processes they have no tables for (and pcs outside
// every mapping they were given) in a request map and wake a worker thread
// through a small ring; it reads the process's executable mappings (recorder/
// process_image.h), builds each object's rows once per file (recorder/
// unwind_rows.h; the vDSO's from the recorder's own), and writes the rows
// into one shared array and the mappings into the process table. Until then
// a process's stacks are frame-pointer walks, as with -g fp. With
// build_on_first_walk, an object's rows are built when a walk first reaches
// it (the walk asks), and never for objects no walk reaches.
//
// The maps are created here, before the recorder drops its capabilities,
// once for all programs: each BPF object holds one-slot handles to them
// (unwind_rows, unwind_processes, unwind_requests). The rows array is sized
// up front (row_capacity); objects whose rows no longer fit are unwound by
// frame pointer, and the rows of objects no live process maps are reused.
//
//   auto loader = UnwindTableLoader::start(bpf_objects, {.row_capacity = 1u << 21});
//   if (!loader) warn(loader.error());        // record with frame-pointer stacks
//   ...                                       // the recording
//   (*loader)->stop();
//   for (auto& note : (*loader)->summary()) sink.addNote(note);
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

struct bpf_object;

namespace incise::recorder {

struct UnwindLoaderOptions {
  uint32_t row_capacity = 1u << 21;  // rows of all objects at once (8 bytes each)
  std::string proc_root = "/proc";
  // Processes whose tables start() builds before it returns (-p targets).
  std::vector<uint32_t> initial_pids;
  bool verbose = false;  // print each object's table as it is loaded
  // Build an object's rows when a walk first reaches it, not when a process
  // that maps it is first seen (a whole machine maps many objects no sample
  // ever reaches). That walk's frames in it are frame-pointer steps.
  bool build_on_first_walk = false;
};

// What the tables and the walks came to (summed over every BPF object).
struct UnwindSummary {
  uint64_t walks = 0;     // CFI walks (processes with tables)
  uint64_t ends[8] = {};  // by enum unwind_end
  uint64_t cfi_frames = 0, fp_frames = 0;
  uint64_t unbuilt_frames = 0;  // of fp_frames: in an object whose rows were not built yet
  uint64_t row_misses = 0;      // of cfi_frames: rows searched, not found in the row cache
  uint64_t objects = 0, rows = 0, row_capacity = 0;
  uint64_t objects_without_rows = 0;  // full array, no .eh_frame, unreadable file
  uint64_t processes = 0;             // processes given mappings
  uint64_t map_reads = 0;             // /proc/PID/maps reads
  // A process's mapping given an object's rows built before (for another
  // process, or for the recorder's own libraries): rows built once, shared.
  uint64_t shared_uses = 0;
  // build_on_first_walk: objects built when a walk reached them, and
  // objects mapped but never reached (never built).
  uint64_t built_on_walk = 0, never_walked = 0;
};

// Rows to make room for: a process and its libraries take 100-250 k
// (python3 65 k, postgres 73 k, libc 28 k, libstdc++ 34 k, node 372 k);
// a whole machine, every distinct binary that runs.
uint32_t defaultUnwindRowCapacity(bool whole_machine);

class UnwindTableLoader {
 public:
  // The BPF objects must include bpf/unwind.bpf.h and be loaded; they may be
  // destroyed before the loader.
  static Result<std::unique_ptr<UnwindTableLoader>> start(
      std::span<const bpf_object* const> objects, UnwindLoaderOptions options);
  ~UnwindTableLoader();
  UnwindTableLoader(const UnwindTableLoader&) = delete;
  UnwindTableLoader& operator=(const UnwindTableLoader&) = delete;

  // Stops the worker (idempotent). The BPF programs keep reading the tables
  // until they are detached.
  void stop();

  // After stop(): totals, and the same as notes for the trace.
  UnwindSummary summary() const;
  std::vector<std::string> notes() const;

  class Impl;

 private:
  explicit UnwindTableLoader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace incise::recorder
