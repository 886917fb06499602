// Blocks on disk (see file_layout.h): encoding and verifying the 24-byte
// block header, and whole reads and writes on a file descriptor that name
// the file and errno when they fail.
//
//   auto header = encodeBlockHeader(BlockType::kMetadata, payload);
//   INCISE_RETURN_IF_ERROR(writeAll(fd, header, path));
//   ...
//   Result<BlockHeader> h = parseBlockHeader(bytes24);   // sync, hash, length
//   if (h && payloadMatches(*h, payload)) use(payload);
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "format/codecs/codec.h"
#include "format/file_layout.h"

namespace incise::format {

using codecs::ByteSpan;

struct BlockHeader {
  BlockType type{};
  uint32_t length = 0;
  uint64_t payload_hash = 0;
};

std::array<uint8_t, kBlockHeaderSize> encodeBlockHeader(BlockType type, ByteSpan payload);
// Checks the sync word, the header hash, the type and the length bound; the
// caller still checks the length against the bytes the file has left.
Result<BlockHeader> parseBlockHeader(ByteSpan bytes);
bool payloadMatches(const BlockHeader& header, ByteSpan payload);

uint64_t hashBytes(ByteSpan bytes);
void putU32(uint8_t* out, uint32_t v);
void putU64(uint8_t* out, uint64_t v);
uint32_t getU32(const uint8_t* p);
uint64_t getU64(const uint8_t* p);

// write(2) until done; retries EINTR and short writes.
Status writeAll(int fd, ByteSpan bytes, const std::string& path);
// pwrite(2) all of `bytes` at `offset`; retries EINTR and short writes.
Status pwriteAll(int fd, uint64_t offset, ByteSpan bytes, const std::string& path);
// pread(2) exactly bytes.size() bytes at `offset`; a short read is an Error.
Status preadAll(int fd, uint64_t offset, std::span<uint8_t> bytes, const std::string& path);

}  // namespace incise::format
