#include "recorder/sources/kernel_records.h"

#include <cstring>

namespace incise::recorder {

namespace {

// Reads fixed-size fields in order, refusing to go past the end.
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  template <typename T>
  bool read(T& out) {
    if (bytes_.size() - at_ < sizeof(T)) return false;
    std::memcpy(&out, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  size_t offset() const { return at_; }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

// The {pid, tid, time} that sample_id_all appends to every record.
constexpr size_t kSampleIdBytes = 16;

bool readSampleId(std::span<const uint8_t> bytes, KernelRecord& record) {
  if (bytes.size() < sizeof(perf_event_header) + kSampleIdBytes) return false;
  Cursor tail(bytes.subspan(bytes.size() - kSampleIdBytes));
  uint32_t pid = 0, tid = 0;
  return tail.read(pid) && tail.read(tid) && tail.read(record.time);
}

// A NUL-terminated string in [from, to) of the record, NUL padding dropped.
bool readString(std::span<const uint8_t> bytes, size_t from, size_t to, std::string& out) {
  if (from > to || to > bytes.size()) return false;
  const char* begin = reinterpret_cast<const char*>(bytes.data() + from);
  out.assign(begin, strnlen(begin, to - from));
  return true;
}

}  // namespace

std::optional<KernelRecord> decodeKernelRecord(std::span<const uint8_t> bytes) {
  perf_event_header header{};
  Cursor in(bytes);
  if (!in.read(header) || header.size != bytes.size()) return std::nullopt;
  KernelRecord record;
  if (!readSampleId(bytes, record)) return std::nullopt;
  const size_t body_end = bytes.size() - kSampleIdBytes;
  switch (header.type) {
    case PERF_RECORD_MMAP2: {
      record.kind = KernelRecord::kMmap;
      uint32_t prot = 0, flags = 0;
      if (!in.read(record.pid) || !in.read(record.tid) || !in.read(record.start) ||
          !in.read(record.length) || !in.read(record.file_offset))
        return std::nullopt;
      if (header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        uint8_t size = 0, reserved1 = 0;
        uint16_t reserved2 = 0;
        uint8_t id[20];
        if (!in.read(size) || !in.read(reserved1) || !in.read(reserved2) || !in.read(id))
          return std::nullopt;
        if (size > sizeof(id)) return std::nullopt;
        record.build_id.assign(reinterpret_cast<const char*>(id), size);
      } else {
        uint64_t generation = 0;
        if (!in.read(record.dev_major) || !in.read(record.dev_minor) || !in.read(record.inode) ||
            !in.read(generation))
          return std::nullopt;
      }
      if (!in.read(prot) || !in.read(flags)) return std::nullopt;
      record.prot = prot;
      if (in.offset() > body_end || !readString(bytes, in.offset(), body_end, record.path))
        return std::nullopt;
      if (record.start + record.length < record.start) return std::nullopt;
      return record;
    }
    case PERF_RECORD_COMM: {
      if (!(header.misc & PERF_RECORD_MISC_COMM_EXEC)) return std::nullopt;  // a rename
      record.kind = KernelRecord::kExec;
      if (!in.read(record.pid) || !in.read(record.tid)) return std::nullopt;
      return record;
    }
    case PERF_RECORD_FORK: {
      record.kind = KernelRecord::kFork;
      uint32_t parent_tid = 0;
      uint64_t time = 0;
      if (!in.read(record.pid) || !in.read(record.parent_pid) || !in.read(record.tid) ||
          !in.read(parent_tid) || !in.read(time))
        return std::nullopt;
      return record;
    }
    case PERF_RECORD_LOST: {
      record.kind = KernelRecord::kLost;
      uint64_t id = 0;
      if (!in.read(id) || !in.read(record.lost)) return std::nullopt;
      return record;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace incise::recorder
