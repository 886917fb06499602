// Encoding::kBytes: one byte blob per row (a user stack copy per sample).
//
// Byte layout, before zstd: every row's length as unsigned LEB128, then the
// blobs concatenated in row order. Lengths first keeps the small, repetitive
// numbers together and the bytes together, so zstd sees each kind of data in
// one run (stack copies of one thread differ from sample to sample by a few
// words; interleaving lengths would break those matches).
//
// Worked example: blobs {"ab", "", "xyz"}
//   lengths: 02 00 03
//   bytes:   61 62 78 79 7A
//   column:  02 00 03 61 62 78 79 7A
//
// Why a column type and not a separate event kind linked to the sample: the
// stack copy belongs to exactly one sample and is read together with it;
// a kind of its own would need a join key (time + tid) on read, a second
// chunk stream to keep in step, and every report to know about the link. A
// blob column keeps one row = one sample, and readers that do not ask for
// the column never decompress it.
//
//   std::string column;
//   codecs::encodeBlobs(lengths, concatenated, column);
//   std::vector<uint64_t> lengths_back; std::string bytes_back;
//   Status s = codecs::decodeBlobs(asBytes(column), rows, lengths_back, bytes_back);
//   // Or in place, no copy: the blobs are column[*at ...].
//   Result<size_t> at = codecs::decodeBlobLengths(asBytes(column), rows, lengths_back);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "format/codecs/codec.h"

namespace incise::format::codecs {

// The largest single blob accepted on read (the recorder copies at most 64 KiB).
inline constexpr uint64_t kMaxBlobBytes = 1u << 20;

// Appends the column: `lengths` (one per row, summing to bytes.size()), then `bytes`.
Status encodeBlobs(std::span<const uint64_t> lengths, std::string_view bytes, std::string& out);

// Checks the column (exactly `rows` lengths, then exactly their sum of bytes:
// no fewer, no trailing) and fills `lengths`; returns where the blobs start,
// so a reader can hand out spans of the column instead of copying it.
Result<size_t> decodeBlobLengths(ByteSpan column, size_t rows, std::vector<uint64_t>& lengths);

// decodeBlobLengths, then a copy of the blobs into `bytes`.
Status decodeBlobs(ByteSpan column, size_t rows, std::vector<uint64_t>& lengths,
                   std::string& bytes);

}  // namespace incise::format::codecs
