// Recovering a trace without a usable footer: walk the blocks from the start,
// keep every block whose header and payload verify, and when one does not,
// record the damage and resynchronise on the next sync word whose header and
// payload verify.
//
//   std::vector<Damage> damage;
//   Status s = scanBlocks(file, 8, [&](uint64_t offset, const BlockHeader& h, ByteSpan payload) {
//     return useBlock(offset, h, payload);   // an Error here marks the block as damage
//   }, damage);
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "format/block_io.h"
#include "format/recovery_report.h"

namespace incise::format {

// An open trace: the reader owns the descriptor, the recovery scan reads it.
struct TraceFile {
  UniqueFd fd;
  std::string path;
  uint64_t size = 0;
};

// A block that verified: its header and payload.
struct VerifiedBlock {
  BlockHeader header;
  std::vector<uint8_t> payload;
};

// Reads the block at `offset` and checks sync, header hash, the length
// against `end` (the bytes that may belong to blocks) and the payload hash.
// Errors read "block at offset N: <what>".
Result<VerifiedBlock> readVerifiedBlock(const TraceFile& file, uint64_t offset, uint64_t end);

using BlockVisitor = std::function<Status(uint64_t offset, const BlockHeader&, ByteSpan payload)>;

// Visits every verified block from `start` to the end of the file (a valid
// trailer at the very end is not damage). Appends what could not be read to
// `damage`. Fails only when the file cannot be read at all.
// A whole region copy (file_layout.h) is visited block by block, at the
// blocks' offsets inside it, instead of the region it replaces; those are
// counted in `regions_from_copies`.
Status scanBlocks(const TraceFile& file, uint64_t start, const BlockVisitor& visit,
                  std::vector<Damage>& damage, uint64_t* regions_from_copies = nullptr);

}  // namespace incise::format
