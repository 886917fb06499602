// SymbolHarvest: which objects and kernel addresses the recorded stacks hit,
// and the symbol tables read for them, queued for the trace's next metadata
// delta. The process tracker (recorder/metadata/process_tracker.h) resolves
// each user frame to its mapping and hands the mapped frames here.
//
// An object's symbol table is read the first time a frame hits it, while
// the process and its root still exist. Symbol tables are the biggest thing
// the recorder holds: once the queued ones exceed setPressure's byte
// threshold the handler runs, which has them written out (the tracker's
// takeDelta takes them).
//
// Objects with huge tables (libLLVM, libclang-cpp: 100k+ symbols, 15 MB of
// names, 40 MB while encoded) embed only the symbols their frames hit: the
// harvest keeps the hit file offsets and an open descriptor (so the file
// stays readable after the process and its root are gone) and reads the
// subset in readLargeObjects() at the end, one object at a time.
//
//   SymbolHarvest harvest;
//   SymbolHarvest::StackCursor cursor;      // one per stack
//   harvest.noteUserFrame({&mapping, address, i > 0}, cursor);  // each frame
//   harvest.noteKernelFrames(kernel_frames);
//   harvest.takeQueued(delta);              // symbol tables and notes
//   harvest.readLargeObjects();             // at the end
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "format/metadata.h"
#include "recorder/metadata/hit_offsets.h"
#include "recorder/metadata/mapping_table.h"
#include "recorder/metadata/object_symbols.h"

namespace incise::recorder {

// A user frame with the mapping it falls in (valid for the call it is passed to).
struct MappedFrame {
  const ExecutableMapping* mapping = nullptr;
  uint64_t address = 0;
  // Callers' frames are return addresses: the analyzer names them at
  // address - 1, which is in the calling function even when the call was its
  // last instruction (a noreturn callee), so a subset keeps that too.
  bool return_address = false;
};

class SymbolHarvest {
  struct LargeObject;

 public:
  // Neighbouring frames of a stack mostly hit the same object: a cursor
  // remembers the last one's, for the frames of one stack only.
  class StackCursor {
    friend class SymbolHarvest;
    const MappedObject* object_ = nullptr;
    LargeObject* large_ = nullptr;
  };

  SymbolHarvest() = default;
  SymbolHarvest(const SymbolHarvest&) = delete;
  SymbolHarvest& operator=(const SymbolHarvest&) = delete;

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
  // -g dwarf / hybrid: also embed each hit object's .eh_frame (for offline CFI).
  void setEmbedUnwindTables(bool embed) { embed_unwind_tables_ = embed; }

  // A frame of a stack, leaf first. The objects of the stack's mappings must
  // outlive its cursor (the tracker uses one per stack, within one call).
  void noteUserFrame(const MappedFrame& frame, StackCursor& cursor);
  void noteKernelFrames(std::span<const uint64_t> frames);

  // At the end: queue the hit subsets of the large objects (see above).
  void readLargeObjects();
  size_t largeObjectCount() const { return large_objects_.size(); }
  // Frame offsets hit in large objects so far: readLargeObjects() embeds at
  // most one symbol for each.
  size_t largeObjectHitOffsets() const;

  // `handler` runs whenever the symbol tables queued reach `bytes` (an
  // estimate of their heap size).
  void setPressure(size_t bytes, std::function<void()> handler);
  size_t queuedBytes() const { return queued_bytes_; }
  // Moves the queued symbol tables and notes into `delta`.
  void takeQueued(format::MetadataDelta& delta);

  std::vector<HitObject> hitObjects() const;
  const std::set<uint64_t>& hitKernelAddresses() const { return kernel_addresses_; }

 private:
  struct LargeObject {
    HitObject hit;
    UniqueFd fd;              // held open from the first hit: the process may be gone by the end
    HitOffsets file_offsets;  // of the frames that hit it
  };

  void queueObject(format::ObjectSymbols object);
  Result<format::ObjectSymbols> readHitObject(const HitObject& hit);
  // Starts a hit object: a whole table now, or a large object's subset later.
  void startHitObject(const std::string& key, const MappedFrame& frame);
  void noteHitOffset(LargeObject& large, const MappedFrame& frame);

  std::map<std::string, HitObject> hit_objects_;      // key: build id or path
  std::map<std::string, LargeObject> large_objects_;  // same key
  // The offsets noted last, direct-mapped by (object, offset): a new stack
  // mostly repeats frames of earlier ones, and a hit here costs one compare
  // where a note in the offsets' table probes a large array. Large
  // objects stay in large_objects_ (never moved) until readLargeObjects,
  // which empties this too.
  struct NotedOffset {
    const LargeObject* large = nullptr;
    uint64_t offset = 0;
    bool return_address = false;  // offset - 1 was noted as well
  };
  static constexpr size_t kNotedOffsetSlots = 4096;  // a power of two
  std::vector<NotedOffset> noted_offsets_;
  size_t full_table_limit_ = kFullSymbolTableLimit;
  bool embed_unwind_tables_ = false;
  std::set<uint64_t> kernel_addresses_;
  // The kernel addresses inserted last, direct-mapped by address: a new
  // stack's kernel frames are mostly those of earlier ones, and a hit here
  // skips the tree's walk (addresses are never removed from the set).
  static constexpr size_t kNotedKernelSlots = 4096;  // a power of two
  std::vector<uint64_t> noted_kernel_;
  std::vector<format::ObjectSymbols> queued_objects_;
  std::vector<std::string> queued_notes_;
  size_t queued_bytes_ = 0;
  size_t pressure_bytes_ = 0;
  std::function<void()> pressure_handler_;
};

}  // namespace incise::recorder
