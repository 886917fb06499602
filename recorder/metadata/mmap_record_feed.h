// MmapRecordFeed: the kernel's decoded mmap, exec and fork records
// (recorder/sources/kernel_records.h) applied to a MappingTable, one drained batch
// at a time, in time order: each CPU has its own ring, and a process that
// moved between CPUs has its records in two of them.
//
//   MmapRecordFeed feed(tracker.mappings());
//   std::vector<KernelRecord> batch = ...;   // every ring's records, any order
//   feed.apply(batch);                       // sorted by time, applied, emptied
//   feed.lost();                             // records the kernel could not write
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recorder/metadata/build_id_cache.h"
#include "recorder/metadata/mapping_table.h"
#include "recorder/sources/kernel_records.h"

namespace incise::recorder {

class MmapRecordFeed {
 public:
  // `proc_root` is "/proc" except in tests: open paths go through it.
  explicit MmapRecordFeed(MappingTable& table, std::string proc_root = "/proc")
      : table_(table), proc_root_(std::move(proc_root)) {}

  void apply(std::vector<KernelRecord>& batch);
  uint64_t applied() const { return applied_; }
  uint64_t lost() const { return lost_; }

 private:
  void applyOne(KernelRecord& record);
  ExecutableMapping mappingOf(KernelRecord& record);

  MappingTable& table_;
  std::string proc_root_;
  BuildIdCache build_ids_;  // for records without a build-id (kernels before 5.12)
  uint64_t applied_ = 0;
  uint64_t lost_ = 0;
};

}  // namespace incise::recorder
