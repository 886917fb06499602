// The kernel's side-band perf records that say what a process maps and when
// its image changes: PERF_RECORD_MMAP2 (with the build-id on 5.12+),
// PERF_RECORD_COMM with the exec flag, PERF_RECORD_FORK and PERF_RECORD_LOST.
//
// The events that carry them are opened with sample_id_all and
// sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME (kSampleType), so every
// record ends with {u32 pid, u32 tid, u64 time}; times are CLOCK_MONOTONIC
// (use_clockid), the clock of bpf_ktime_get_ns().
//
//   std::optional<KernelRecord> record = decodeKernelRecord(bytes);  // one whole record
//   if (record && record->kind == KernelRecord::kMmap) table.map(...);
//
// Every length inside a record is checked against the record's size: a
// record that does not add up is dropped (nullopt), never read past.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace incise::recorder {

inline constexpr uint64_t kKernelRecordSampleType = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

struct KernelRecord {
  enum Kind { kMmap, kExec, kFork, kLost };
  Kind kind = kMmap;
  uint64_t time = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  // kFork: the parent process (pid is the child; a new thread has pid == parent_pid).
  uint32_t parent_pid = 0;
  // kMmap
  uint64_t start = 0;
  uint64_t length = 0;
  uint64_t file_offset = 0;
  uint32_t prot = 0;
  std::string path;
  std::string build_id;  // raw bytes; empty when the kernel gave the inode instead
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  // kLost
  uint64_t lost = 0;
};

// Decodes one record (header included); nullopt for records of other types
// and for malformed ones.
std::optional<KernelRecord> decodeKernelRecord(std::span<const uint8_t> bytes);

}  // namespace incise::recorder
