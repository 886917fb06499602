// The objects and kernel addresses stacks hit, and their symbol tables: see
// symbol_harvest.h.
#include "recorder/metadata/symbol_harvest.h"

#include <fcntl.h>

#include <utility>

#include "recorder/metadata/eh_frame_collector.h"

namespace incise::recorder {

void SymbolHarvest::noteUserFrame(const MappedFrame& frame, StackCursor& cursor) {
  const MappedObject& object = *frame.mapping->object;
  if (&object != cursor.object_) {
    const std::string& key = object.build_id.empty() ? object.path : object.build_id;
    auto large = large_objects_.find(key);
    // An object's first hit starts it (noting this address when it is large).
    const bool first_hit = large == large_objects_.end() && !hit_objects_.count(key);
    if (first_hit) {
      startHitObject(key, frame);
      large = large_objects_.find(key);
    }
    cursor.object_ = &object;
    cursor.large_ = large == large_objects_.end() ? nullptr : &large->second;
    if (first_hit) return;
  }
  if (cursor.large_) noteHitOffset(*cursor.large_, frame);
}

void SymbolHarvest::noteKernelFrames(std::span<const uint64_t> frames) {
  if (noted_kernel_.empty()) noted_kernel_.resize(kNotedKernelSlots);
  for (uint64_t address : frames) {
    uint64_t& noted =
        noted_kernel_[(address * 0x9e3779b97f4a7c15ull) >> 32 & (kNotedKernelSlots - 1)];
    if (noted == address && address != 0) continue;  // 0: an empty slot
    kernel_addresses_.insert(address);
    noted = address;
  }
}

Result<format::ObjectSymbols> SymbolHarvest::readHitObject(const HitObject& hit) {
  Result<format::ObjectSymbols> object = readObjectSymbols(hit);
  if (object && embed_unwind_tables_) {
    Status tables = addUnwindTables(hit.open_path, *object);
    if (!tables) tables = addUnwindTables(hit.path, *object);
    if (!tables) queued_notes_.push_back("unwind tables of " + hit.path + ": " + tables.message());
  }
  return object;
}

void SymbolHarvest::noteHitOffset(LargeObject& large, const MappedFrame& frame) {
  const ExecutableMapping& range = *frame.mapping;
  const uint64_t offset = frame.address - range.start + range.file_offset;
  if (noted_offsets_.empty()) noted_offsets_.resize(kNotedOffsetSlots);
  const uint64_t mix = (reinterpret_cast<uintptr_t>(&large) ^ offset) * 0x9e3779b97f4a7c15ull;
  NotedOffset& noted = noted_offsets_[mix >> 32 & (kNotedOffsetSlots - 1)];
  if (noted.large == &large && noted.offset == offset &&
      noted.return_address >= frame.return_address)
    return;
  large.file_offsets.add(offset);
  if (frame.return_address && offset > 0) large.file_offsets.add(offset - 1);
  noted = NotedOffset{.large = &large, .offset = offset, .return_address = frame.return_address};
}

void SymbolHarvest::startHitObject(const std::string& key, const MappedFrame& frame) {
  const ExecutableMapping& range = *frame.mapping;
  HitObject hit{.path = range.object->path,
                .open_path = readablePath(range),
                .build_id = range.object->build_id};
  hit_objects_.emplace(key, hit);
  if (embedsHitSubset(hit, full_table_limit_)) {
    LargeObject large{.hit = hit};
    if (large_objects_.size() < kMaxOpenLargeObjects)
      large.fd.reset(open(hit.open_path.c_str(), O_RDONLY | O_CLOEXEC));
    noteHitOffset(large, frame);
    large_objects_.emplace(key, std::move(large));
    return;
  }
  // Read now: the process (and its /proc/PID/root) may be gone by the end.
  Result<format::ObjectSymbols> object = readHitObject(hit);
  if (object) {
    queueObject(object.take());  // may write the queued metadata out
  } else {
    queued_notes_.push_back(object.error().message());
  }
}

void SymbolHarvest::readLargeObjects() {
  for (auto& [key, large] : large_objects_) {
    HitObject hit = large.hit;
    if (large.fd) hit.open_path = "/proc/self/fd/" + std::to_string(large.fd.get());
    Result<format::ObjectSymbols> object = readHitObject(hit);
    size_t total = 0;
    if (object) total = keepHitSymbols(hit, *object, large.file_offsets.sorted());
    large.fd.reset();
    if (!object) {
      queued_notes_.push_back(object.error().message());
      continue;
    }
    object->path = large.hit.path;
    queued_notes_.push_back(large.hit.path + ": " + std::to_string(object->symbols.size()) +
                            " of " + std::to_string(total) +
                            " symbols embedded (a large table: only the functions hit)");
    queueObject(object.take());
  }
  large_objects_.clear();
  noted_offsets_.clear();
}

size_t SymbolHarvest::largeObjectHitOffsets() const {
  size_t offsets = 0;
  for (const auto& [key, large] : large_objects_) offsets += large.file_offsets.size();
  return offsets;
}

void SymbolHarvest::setPressure(size_t bytes, std::function<void()> handler) {
  pressure_bytes_ = bytes;
  pressure_handler_ = std::move(handler);
}

void SymbolHarvest::queueObject(format::ObjectSymbols object) {
  // Heap estimate: each symbol is a struct plus its name (often longer than
  // the small-string buffer), then the unwind tables.
  size_t bytes = object.eh_frame.size() + object.eh_frame_hdr.size() +
                 object.segments.size() * sizeof(format::Segment);
  for (const format::Symbol& symbol : object.symbols) bytes += sizeof(symbol) + symbol.name.size();
  queued_bytes_ += bytes;
  queued_objects_.push_back(std::move(object));
  if (pressure_handler_ && queued_bytes_ >= pressure_bytes_) pressure_handler_();
}

void SymbolHarvest::takeQueued(format::MetadataDelta& delta) {
  for (format::ObjectSymbols& object : queued_objects_) delta.objects.push_back(std::move(object));
  for (std::string& note : queued_notes_) delta.notes.push_back(std::move(note));
  queued_objects_.clear();
  queued_notes_.clear();
  queued_bytes_ = 0;
}

std::vector<HitObject> SymbolHarvest::hitObjects() const {
  std::vector<HitObject> out;
  for (const auto& [key, object] : hit_objects_) out.push_back(object);
  return out;
}

}  // namespace incise::recorder
