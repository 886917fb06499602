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
  if (!preadAll(file.fd.get(), offset, trailer, file.path)) return false;
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
    if (!preadAll(file.fd.get(), from, window, file.path)) return file.size;
    for (size_t i = 0; i + sizeof(sync) <= n; ++i) {
      if (std::memcmp(window.data() + i, sync, sizeof(sync)) != 0) continue;
      if (readVerifiedBlock(file, from + i, file.size)) return from + i;
    }
    if (n < kWindow) break;
    from += n - (sizeof(sync) - 1);  // a sync word may straddle two windows
  }
  return file.size;
}

// A region copy (file_layout.h): a whole one stands for the blocks in
// [start, end); one cut short (the writer was killed appending it) for
// nothing, and its own bytes [at, next) are skipped.
struct RegionCopy {
  uint64_t at = 0;
  uint64_t next = 0;
  bool whole = false;
  uint64_t start = 0;
  uint64_t end = 0;
};

RegionCopy readRegionCopy(const TraceFile& file, uint64_t at, const BlockHeader& header) {
  RegionCopy copy{.at = at, .next = std::min(file.size, at + kBlockHeaderSize + header.length)};
  if (at + kBlockHeaderSize + header.length > file.size || header.length < kRegionCopyPrefix) {
    return copy;
  }
  std::vector<uint8_t> payload(header.length);
  if (!preadAll(file.fd.get(), at + kBlockHeaderSize, payload, file.path)) return copy;
  if (!payloadMatches(header, payload)) return copy;
  copy.start = getU64(payload.data());
  copy.end = getU64(payload.data() + 8);
  copy.whole = copy.start < copy.end && copy.end <= at;
  return copy;
}

// Finds the region copies by walking block headers alone (a 24-byte read a
// block), resynchronising as the scan does where a header does not verify.
std::vector<RegionCopy> findRegionCopies(const TraceFile& file, uint64_t start) {
  std::vector<RegionCopy> copies;
  uint64_t pos = start;
  uint8_t raw[kBlockHeaderSize];
  while (pos + kBlockHeaderSize <= file.size && !isTrailerAt(file, pos)) {
    Result<BlockHeader> header = preadAll(file.fd.get(), pos, raw, file.path)
                                     ? parseBlockHeader(ByteSpan(raw, sizeof(raw)))
                                     : Result<BlockHeader>(Error("unreadable"));
    if (!header) {
      pos = findNextBlock(file, pos + 1);
      continue;
    }
    if (header->type == BlockType::kRegionCopy)
      copies.push_back(readRegionCopy(file, pos, *header));
    pos += kBlockHeaderSize + header->length;
  }
  return copies;
}

// Visits the blocks inside a whole region copy (its hash verified by
// readRegionCopy) where they lie in the file, each read and verified as any
// block is.
void visitCopiedBlocks(const TraceFile& file, const RegionCopy& copy, const BlockVisitor& visit,
                       std::vector<Damage>& damage) {
  uint64_t pos = copy.at + kBlockHeaderSize + kRegionCopyPrefix;
  while (pos < copy.next) {
    Result<VerifiedBlock> block = readVerifiedBlock(file, pos, copy.next);
    if (!block || block->header.type == BlockType::kRegionCopy) {
      damage.push_back(Damage{pos, copy.next - pos, "a block in a region copy is damaged"});
      return;
    }
    uint64_t next = pos + kBlockHeaderSize + block->header.length;
    Status used = visit(pos, block->header, block->payload);
    if (!used) damage.push_back(Damage{pos, next - pos, used.error().message()});
    pos = next;
  }
}

}  // namespace

Result<VerifiedBlock> readVerifiedBlock(const TraceFile& file, uint64_t offset, uint64_t end) {
  if (offset > end || end - offset < kBlockHeaderSize) {
    return Error(at(offset) + "truncated: " + std::to_string(end > offset ? end - offset : 0) +
                 " bytes left, too few for a block header");
  }
  uint8_t raw[kBlockHeaderSize];
  Status read = preadAll(file.fd.get(), offset, raw, file.path);
  if (!read) return read.error();
  Result<BlockHeader> header = parseBlockHeader(ByteSpan(raw, sizeof(raw)));
  if (!header) return header.error().context(blockAt(offset));
  uint64_t left = end - offset - kBlockHeaderSize;
  if (header->length > left) {
    return Error(at(offset) + "truncated: payload of " + std::to_string(header->length) +
                 " bytes but only " + std::to_string(left) + " remain");
  }
  VerifiedBlock block{*header, std::vector<uint8_t>(header->length)};
  read = preadAll(file.fd.get(), offset + kBlockHeaderSize, block.payload, file.path);
  if (!read) return read.error();
  if (!payloadMatches(*header, block.payload)) {
    return Error(at(offset) + "payload checksum mismatch");
  }
  return block;
}

Status scanBlocks(const TraceFile& file, uint64_t start, const BlockVisitor& visit,
                  std::vector<Damage>& damage, uint64_t* regions_from_copies) {
  // [from, to) ranges the scan skips: regions a whole copy replaces, and the
  // bytes of copies cut short.
  std::vector<std::pair<uint64_t, uint64_t>> skip;
  std::vector<RegionCopy> copies = findRegionCopies(file, start);
  for (const RegionCopy& copy : copies) {
    if (copy.whole) {
      skip.emplace_back(copy.start, copy.end);
      if (regions_from_copies != nullptr) ++*regions_from_copies;
    } else {
      skip.emplace_back(copy.at, copy.next);
      damage.push_back(Damage{copy.at, copy.next - copy.at,
                              "a region copy cut short (the writer stopped while merging small "
                              "chunks); the region's own chunks are read"});
    }
  }
  uint64_t pos = start;
  while (pos < file.size) {
    if (isTrailerAt(file, pos)) break;
    auto skipped = std::find_if(skip.begin(), skip.end(),
                                [&](const auto& r) { return pos >= r.first && pos < r.second; });
    if (skipped != skip.end()) {
      pos = skipped->second;
      continue;
    }
    auto copy = std::find_if(copies.begin(), copies.end(),
                             [&](const RegionCopy& c) { return c.whole && c.at == pos; });
    if (copy != copies.end()) {
      visitCopiedBlocks(file, *copy, visit, damage);
      pos = copy->next;
      continue;
    }
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
