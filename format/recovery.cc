// Block scanning and resynchronisation for files without a usable footer.
#include "format/recovery.h"

#include <algorithm>
#include <cstring>

namespace incise::format {
namespace {

std::string blockAt(uint64_t offset) {
  return "block at offset " + std::to_string(offset);
}
std::string at(uint64_t offset) {
  return blockAt(offset) + ": ";
}

bool isTrailerAt(const TraceFile& file, uint64_t offset) {
  if (offset + kTrailerSize != file.size) return false;
  uint8_t trailer[kTrailerSize];
  if (!preadAll(file.fd, offset, trailer, file.path)) return false;
  return std::memcmp(trailer + 8, kTrailerMagic, sizeof(kTrailerMagic)) == 0;
}

// The first offset >= from holding a block that verifies, or file.size.
uint64_t findNextBlock(const TraceFile& file, uint64_t from) {
  constexpr size_t kWindow = 1 << 20;
  std::vector<uint8_t> window;
  uint8_t sync[4];
  putU32(sync, kBlockSync);
  while (from + kBlockHeaderSize <= file.size) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kWindow, file.size - from));
    window.resize(n);
    if (!preadAll(file.fd, from, window, file.path)) return file.size;
    for (size_t i = 0; i + sizeof(sync) <= n; ++i) {
      if (std::memcmp(window.data() + i, sync, sizeof(sync)) != 0) continue;
      if (readVerifiedBlock(file, from + i, file.size)) return from + i;
    }
    if (n < kWindow) break;
    from += n - (sizeof(sync) - 1);  // a sync word may straddle two windows
  }
  return file.size;
}

}  // namespace

Result<VerifiedBlock> readVerifiedBlock(const TraceFile& file, uint64_t offset, uint64_t end) {
  if (offset > end || end - offset < kBlockHeaderSize) {
    return Error(at(offset) + "truncated: " + std::to_string(end > offset ? end - offset : 0) +
                 " bytes left, too few for a block header");
  }
  uint8_t raw[kBlockHeaderSize];
  Status read = preadAll(file.fd, offset, raw, file.path);
  if (!read) return read.error();
  Result<BlockHeader> header = parseBlockHeader(ByteSpan(raw, sizeof(raw)));
  if (!header) return header.error().context(blockAt(offset));
  uint64_t left = end - offset - kBlockHeaderSize;
  if (header->length > left) {
    return Error(at(offset) + "truncated: payload of " + std::to_string(header->length) +
                 " bytes but only " + std::to_string(left) + " remain");
  }
  VerifiedBlock block{*header, std::vector<uint8_t>(header->length)};
  read = preadAll(file.fd, offset + kBlockHeaderSize, block.payload, file.path);
  if (!read) return read.error();
  if (!payloadMatches(*header, block.payload)) {
    return Error(at(offset) + "payload checksum mismatch");
  }
  return block;
}

Status scanBlocks(const TraceFile& file, uint64_t start, const BlockVisitor& visit,
                  std::vector<Damage>& damage) {
  uint64_t pos = start;
  while (pos < file.size) {
    if (isTrailerAt(file, pos)) break;
    Result<VerifiedBlock> block = readVerifiedBlock(file, pos, file.size);
    if (block) {
      uint64_t next = pos + kBlockHeaderSize + block->header.length;
      Status used = visit(pos, block->header, block->payload);
      if (!used) damage.push_back(Damage{pos, next - pos, used.error().message()});
      pos = next;
      continue;
    }
    uint64_t next = findNextBlock(file, pos + 1);
    damage.push_back(Damage{pos, next - pos, block.error().message()});
    pos = next;
  }
  return Status::ok();
}

}  // namespace incise::format
