// Fuzz entry for format::Reader: a whole trace from bytes, opened and read
// the way `incise check` reads it (every chunk's columns, metadata, stacks).
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "format/block_io.h"
#include "format/file_layout.h"
#include "format/reader.h"
#include "fuzz/fuzz_entries.h"

namespace incise::fuzz {
namespace {

// Reading a result makes sure the decoders filled what they claim to.
uint64_t touchMetadata(const format::Metadata& m) {
  uint64_t sum = m.processes.size() + m.threads.size() + m.notes.size();
  for (const auto& p : m.processes) sum += p.comm.size() + p.cmdline.size();
  for (const auto& map : m.mappings) sum += map.path.size() + map.build_id.size() + map.end;
  for (const auto& o : m.objects) {
    sum += o.symbols.size() + o.segments.size() + o.eh_frame.size();
    for (const auto& s : o.symbols) sum += s.name.size() + s.address;
  }
  for (const auto& k : m.kernel_symbols) sum += k.name.size();
  for (const auto& snapshot : m.perf_maps) sum += snapshot.entries.size();
  return sum;
}

uint64_t readEverything(const format::Reader& reader) {
  uint64_t sum = touchMetadata(reader.metadata()) + reader.header().command_line.size();
  const format::StackTable& stacks = reader.stacks();
  for (uint64_t id = 0; id <= stacks.maxId() + 1; ++id) {
    for (uint64_t frame : stacks.frames(id)) sum += frame;
  }
  for (const format::ChunkRef& ref : reader.blocks()) {
    if (ref.block_type != format::BlockType::kEventChunk &&
        ref.block_type != format::BlockType::kStackChunk) {
      continue;
    }
    Result<format::Chunk> chunk = reader.readChunk(ref, format::ColumnSet::all());
    if (chunk) {
      for (unsigned c = 0; c < 16; ++c) {
        for (uint64_t v : chunk->column(c)) sum += v;
      }
    }
    Result<std::vector<format::ColumnSize>> sizes = reader.columnSizes(ref);
    if (sizes) sum += sizes->size();
  }
  for (uint8_t kind = 0; kind < 10; ++kind) {
    sum += reader.rows(static_cast<format::EventKind>(kind));
    sum += reader.chunks(static_cast<format::EventKind>(kind), {0, 1000}).size();
  }
  return sum + reader.endTime() + reader.recovery().damage.size();
}

bool writeWhole(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

size_t fixBlockChecksums(std::string& file) {
  auto* bytes = reinterpret_cast<uint8_t*>(file.data());
  size_t fixed = 0;
  size_t pos = sizeof(format::kFileMagic);
  while (pos + format::kBlockHeaderSize <= file.size()) {
    if (format::getU32(bytes + pos) != format::kBlockSync) {
      ++pos;
      continue;
    }
    uint64_t length = format::getU32(bytes + pos + 8);
    uint64_t left = file.size() - pos - format::kBlockHeaderSize;
    if (length > left) {
      ++pos;
      continue;
    }
    format::putU32(bytes + pos + 12,
                   static_cast<uint32_t>(format::hashBytes(format::ByteSpan(bytes + pos, 12))));
    format::putU64(bytes + pos + 16, format::hashBytes(format::ByteSpan(
                                         bytes + pos + format::kBlockHeaderSize, length)));
    ++fixed;
    pos += format::kBlockHeaderSize + length;
  }
  return fixed;
}

int fuzzTraceReader(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool fix_checksums = data[0] & 1;
  std::string file(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (fix_checksums) fixBlockChecksums(file);
  // A memfd is a regular file the reader can pread, with no disk and no cleanup.
  int fd = memfd_create("incise-fuzz-trace", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (writeWhole(fd, file)) {
    auto reader = format::Reader::open("/proc/self/fd/" + std::to_string(fd));
    if (reader) {
      volatile uint64_t sink = readEverything(**reader);
      (void)sink;
    }
  }
  ::close(fd);
  return 0;
}

}  // namespace incise::fuzz
