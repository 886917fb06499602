// The payload of a metadata block: a Cap'n Proto message, compressed.
//
// Symbol tables, kernel symbols, perf maps and (in dwarf mode) .eh_frame
// copies make metadata the largest part of a short trace; names compress
// 4-6x with zstd. From format 1.2 a kMetadata payload is
//
//   0  u8   Compression (0 none, 1 zstd)
//   1  u32  LE size of the message after decompression (<= kMaxRawColumnBytes)
//   5  ...  the stored bytes
//
// Example: a 10,000-byte message that zstd shrinks to 2,000 bytes is stored
// as 01 10 27 00 00 followed by the 2,000-byte zstd frame. Files of format
// 1.0/1.1 stored the message bare; the reader passes their payload through.
//
//   std::string payload = packMessage(encodeMetadata(delta), /*zstd_level=*/3);
//   Result<std::string> message = unpackMessage(payload_bytes);
#pragma once

#include <string>

#include "base/status.h"
#include "format/codecs/codec.h"

namespace incise::format {

inline constexpr uint16_t kFirstMinorWithPackedMetadata = 2;

std::string packMessage(const std::string& message, int zstd_level);
Result<std::string> unpackMessage(codecs::ByteSpan payload);

}  // namespace incise::format
