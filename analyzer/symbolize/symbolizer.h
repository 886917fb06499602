// Symbolizer: code address -> Frame, for one trace.
//
// Built from the trace's metadata: the embedded symbol tables, each
// process's mappings with the time they were seen, the kernel symbols and the
// JIT perf-map snapshots with their times. Names come, in order, from the
// richest of: a full .symtab found locally (see DebugFileFinder: build-id
// debug directories, --symfs, .gnu_debuglink) or through debuginfod when
// DEBUGINFOD_URLS is set; else the table embedded in the trace (matched by
// build-id, else path), with a local .dynsym naming what it lacks. An
// address no symbol names is grouped by the .eh_frame FDE holding it
// ("libc.so.6!fn_3fb20": one row per function, still counted unnamed). Kernel
// addresses (top bit set) use the embedded kernel symbols. Anonymous memory,
// or no mapping at all, uses the pid's perf-map entries valid at that time.
// It never executes anything and never opens a trace path outside --symfs.
// The metadata must outlive the Symbolizer: embedded symbol tables are read
// in place, and only for objects a lookup hits.
//
// A user address goes: the pid's mapping valid at `time` -> file offset ->
// ELF address through the object's PT_LOAD segments -> symbol by binary
// search. Answers are cached per (pid, address) with the time window over
// which they hold, in a bounded direct-mapped cache, and frames are shared
// per (object, file offset), so a repeated address costs one hash and memory
// grows only with distinct frames. Frames are numbered densely (Frame::id). Not thread-safe: one
// per thread, or a lock around it.
//
//   Symbolizer symbolizer(reader.metadata(), {.symfs = "/srv/sysroot"});
//   const Frame& frame = symbolizer.lookup(pid, ip, time);   // always a frame
//   if (const Frame* known = symbolizer.tryLookup(pid, ip, time)) use(known->function);
//   symbolizer.counters().unsymbolized_frames;
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/symbolize/debug_file_finder.h"
#include "analyzer/symbolize/dense_id_index.h"
#include "analyzer/symbolize/frame.h"
#include "analyzer/symbolize/source_lines.h"
#include "analyzer/symbolize/symbol_table.h"
#include "analyzer/symbolize/symbolize_counters.h"
#include "analyzer/symbolize/symbolizer_options.h"
#include "analyzer/symbolize/timed_intervals.h"
#include "format/metadata.h"
#include "format/reader.h"

namespace incise::analyzer {

class Symbolizer {
 public:
  explicit Symbolizer(const format::Metadata& metadata, SymbolizerOptions options = {});
  explicit Symbolizer(const format::Reader& reader, SymbolizerOptions options = {})
      : Symbolizer(reader.metadata(), std::move(options)) {}
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;
  ~Symbolizer();

  // Always a frame; unknown ones are named "module+0xoffset" or
  // "[unknown] 0xaddress". The reference stays valid as long as the
  // Symbolizer.
  const Frame& lookup(uint32_t pid, uint64_t address, uint64_t time);
  // The same frame when it has a function name; null when it does not.
  const Frame* tryLookup(uint32_t pid, uint64_t address, uint64_t time);
  // lookup() by value, for callers that keep frames beyond the symbolizer.
  Frame symbolize(uint32_t pid, uint64_t address, uint64_t time) {
    return lookup(pid, address, time);
  }

  // The source line of a frame in an object whose local symbol file (a debug
  // file, or a binary under --symfs) has DWARF line tables; nullopt otherwise.
  std::optional<SourceLine> sourceLine(const Frame& frame);

  // The frame that marks where stackFrames cut a stack ("[stack cut]").
  const Frame& stackCut();

  const SymbolizeCounters& counters() const { return counters_; }

 private:
  static constexpr uint32_t kAnonymous = UINT32_MAX;

  struct ObjectState {
    std::string path;
    std::string build_id;
    std::string module;
    bool resolved = false;
    // The richest table first; the other names what it lacks.
    SymbolSource source = SymbolSource::kUnknown;
    SymbolTable table;
    SymbolSource fallback_source = SymbolSource::kUnknown;
    SymbolTable fallback;
    std::vector<format::Symbol> found_symbols;  // from a local file: a table points into them
    // Functions no symbol names, from .eh_frame FDEs (embedded as nameless
    // symbols, or read from an embedded or local .eh_frame): sorted.
    std::vector<objfile::FunctionRange> unnamed_functions;
    std::vector<format::Segment> segments;
    // The local file the symbols came from (see FoundSymbols), read for
    // lines on the first sourceLine() of one of its frames.
    std::string symbol_file_root;
    std::string symbol_file_relative;
    bool lines_read = false;
    std::unique_ptr<SourceLines> lines;
  };
  struct MappingValue {
    uint32_t object = kAnonymous;  // anonymous executable memory (JIT code) when kAnonymous
    uint64_t start = 0;
    uint64_t file_offset = 0;
  };
  struct PerfMapValue {
    uint32_t entry = 0;  // index into perf_map_names_
    uint64_t start = 0;
  };
  struct Key {
    uint64_t space = 0;  // a pid, or what a frame belongs to (tag << 56 | id)
    uint64_t address = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };
  struct CachedAnswer {
    Key key;
    uint64_t valid_from = 0;
    uint64_t valid_until = 0;
    const Frame* frame = nullptr;  // in frame_blocks_; null in an empty slot
  };
  // Answers live in a direct-mapped cache of bounded size: a miss costs one
  // mapping search, and memory stays flat however many distinct (pid,
  // address) pairs a trace has (50 processes of one binary on a 1 GiB trace
  // made an unbounded map of them the analyzer's largest structure).
  // It starts small (a page fault per touched 4 KiB of a big table cost a
  // small report more than its lookups) and grows, emptied, when misses
  // show it is too small for the trace.
  static constexpr size_t kFirstAnswerSlots = size_t{1} << 10;
  static constexpr size_t kMaxAnswerSlots = size_t{1} << 16;

  const Frame& resolve(uint32_t pid, uint64_t address, uint64_t time, CachedAnswer& answer);
  const Frame& kernelFrame(uint64_t address);
  const Frame& objectFrame(const MappingValue& mapping, uint64_t address);
  const Frame& perfMapFrame(uint32_t pid, const PerfMapValue& entry, uint64_t address);
  const Frame& unknownFrame(uint64_t address);
  ObjectState& resolvedObject(uint32_t index);
  uint32_t objectFor(const std::string& build_id, const std::string& path);
  const format::ObjectSymbols* embeddedFor(const ObjectState& object) const;

  SymbolizeCounters counters_;
  NameStyle names_;
  DebugFileFinder finder_;
  const std::vector<format::ObjectSymbols>& embedded_;  // the metadata's, not a copy
  std::unordered_map<std::string, size_t> embedded_by_build_id_;
  std::unordered_map<std::string, size_t> embedded_by_path_;
  std::vector<ObjectState> objects_;
  std::unordered_map<std::string, uint32_t> object_by_key_;
  std::unordered_map<uint32_t, TimedIntervals<MappingValue>> mappings_;
  std::unordered_map<uint32_t, TimedIntervals<PerfMapValue>> perf_maps_;
  std::vector<std::string> perf_map_names_;
  SymbolTable kernel_;
  // Frames never move or die before the Symbolizer: answers_ and callers
  // point at them. They live in fixed-size blocks, indexed by Frame::id, and
  // are found by key through frame_index_ (one flat array, where a map spent
  // an allocation per frame).
  static constexpr size_t kFramesPerBlock = 512;
  struct KeyedFrame {
    Key key;
    Frame frame;
  };
  std::vector<std::unique_ptr<KeyedFrame[]>> frame_blocks_;
  size_t frame_count_ = 0;
  DenseIdIndex frame_index_;
  KeyedFrame& keyedFrame(uint32_t id) {
    return frame_blocks_[id / kFramesPerBlock][id % kFramesPerBlock];
  }
  // The frame for `key`, and whether it was just made (and so needs filling in).
  std::pair<Frame&, bool> frameFor(const Key& key);
  // calloc'd: the kernel's zero pages, so untouched slots cost neither a
  // memset nor a page fault (a vector zeroing 2.6 MB up front was 20% of
  // `incise top` on a 60 k-sample trace).
  struct FreeAnswers {
    void operator()(CachedAnswer* answers) const { std::free(answers); }
  };
  std::unique_ptr<CachedAnswer[], FreeAnswers> answers_;
  size_t answer_slots_ = 0;
  uint64_t misses_at_this_size_ = 0;
  void sizeAnswerCache(size_t slots);
};

}  // namespace incise::analyzer
