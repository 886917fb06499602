#include "recorder/metadata/mmap_record_feed.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>

namespace incise::recorder {

void MmapRecordFeed::apply(std::vector<KernelRecord>& batch) {
  std::stable_sort(batch.begin(), batch.end(),
                   [](const KernelRecord& a, const KernelRecord& b) { return a.time < b.time; });
  for (KernelRecord& record : batch) applyOne(record);
  applied_ += batch.size();
  batch.clear();
}

void MmapRecordFeed::applyOne(KernelRecord& record) {
  switch (record.kind) {
    case KernelRecord::kMmap:
      if (record.prot & PROT_EXEC) table_.map(mappingOf(record));
      break;
    case KernelRecord::kExec:
      table_.exec(record.pid, record.time);
      break;
    case KernelRecord::kFork:
      table_.fork(record.parent_pid, record.pid, record.time);
      break;
    case KernelRecord::kLost:
      lost_ += record.lost;
      table_.markAllIncomplete();  // a frame miss now re-reads /proc/PID/maps
      break;
  }
}

ExecutableMapping MmapRecordFeed::mappingOf(KernelRecord& record) {
  ExecutableMapping mapping{.pid = record.pid,
                            .start = record.start,
                            .end = record.start + record.length,
                            .file_offset = record.file_offset,
                            .prot = record.prot,
                            .time = record.time};
  MappedObject probe{.path = record.path};
  if (probe.fileBacked()) {
    std::string& open_path = mapping.open_path;
    open_path = proc_root_;
    open_path += '/';
    open_path += std::to_string(record.pid);
    if (probe.deleted()) {
      // The exact file through the process, even deleted or in a container.
      char range[64];
      std::snprintf(range, sizeof(range), "/map_files/%lx-%lx",
                    static_cast<unsigned long>(mapping.start),
                    static_cast<unsigned long>(mapping.end));
      open_path += range;
    } else {
      open_path += "/root";
      open_path += record.path;
    }
    if (record.build_id.empty()) {
      char key[64];
      std::snprintf(key, sizeof(key), "%u:%u:%llu:", record.dev_major, record.dev_minor,
                    static_cast<unsigned long long>(record.inode));
      record.build_id = build_ids_.of(open_path, key + record.path);
    }
  }
  mapping.object = table_.object(record.path, record.build_id);
  return mapping;
}

}  // namespace incise::recorder
