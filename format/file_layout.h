// The byte layout of a trace file. Everything here is frozen on disk.
//
//   file    := magic(8) block* trailer(16)?
//   block   := block_header(24) payload
//   trailer := footer_offset(u64 LE) "INCISEND"
//
//   block_header (little-endian):
//     0  u32  sync        0x4B4C4249 ("IBLK"), lets a scan resynchronise
//     4  u8   type        BlockType
//     5  u8   reserved    0
//     6  u16  reserved    0
//     8  u32  length      payload bytes, at most kMaxBlockPayload
//    12  u32  header_hash low 32 bits of XXH64 of bytes 0..11 (rejects a garbage length early)
//    16  u64  payload_hash XXH64 of the payload, seed 0
//
// Payloads:
//   kHeader: one Cap'n Proto message (flat array, unpacked), in every version.
//   kMetadata: the same, behind a compression prefix from 1.2 (message_payload.h).
//   kFooter: the same, packed (Cap'n Proto packing) from 2.0.
//   kEventChunk, kStackChunk: u32 LE n, then n bytes of a Cap'n Proto ChunkHeader
//     message, then the column area; each column is ColumnRef.offset bytes into it.
//     From 2.0 the top bit of n says the header is packed (chunk_codec.h).
//   kRegionCopy (2.1): u64 LE start | u64 LE end | whole blocks, back to back.
//     Written at the end of the file while the writer merges the small chunks
//     in [start, end) (format/region_merge.h); a scan that finds one whole
//     takes its blocks instead of whatever lies in [start, end). The writer
//     truncates it away once the merged blocks are in place, so a file that
//     was closed has none, and a footer never indexes one.
//
// The first block is always kHeader. The footer is the last block; the trailer
// points at it. A file without a valid trailer is recovered by scanning blocks
// from the start (format/recovery.cc).
#pragma once

#include <cstdint>

namespace incise::format {

inline constexpr char kFileMagic[8] = {'I', 'N', 'C', 'I', 'S', 'E', 0x00, 0x01};
inline constexpr char kTrailerMagic[8] = {'I', 'N', 'C', 'I', 'S', 'E', 'N', 'D'};
inline constexpr uint32_t kBlockSync = 0x4B4C4249;
inline constexpr uint32_t kBlockHeaderSize = 24;
inline constexpr uint32_t kTrailerSize = 16;
inline constexpr uint32_t kMaxBlockPayload = 256u << 20;  // nothing we write comes close

enum class BlockType : uint8_t {
  kHeader = 1,
  kEventChunk = 2,
  kStackChunk = 3,
  kMetadata = 4,
  kFooter = 5,
  kRegionCopy = 6,
};
inline constexpr uint8_t kLastBlockType = static_cast<uint8_t>(BlockType::kRegionCopy);
inline constexpr uint32_t kRegionCopyPrefix = 16;  // start and end before the blocks

// ChunkHeader.kind of a stack-table chunk.
inline constexpr uint8_t kStackTableKind = 0x80;

// Stack-table chunk columns.
enum class StackColumn : uint16_t {
  kFrameCount = 0,  // frames per stack (varint)
  kFrames = 1,      // all frames, leaf first, concatenated (delta varint; fixed64 from 2.0)
};

}  // namespace incise::format
