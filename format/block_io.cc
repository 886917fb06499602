// Block header encoding and whole-buffer file I/O.
#include "format/block_io.h"

#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>

namespace incise::format {

uint64_t hashBytes(ByteSpan bytes) {
  return XXH64(bytes.data(), bytes.size(), 0);
}

void putU32(uint8_t* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
void putU64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t getU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t getU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::array<uint8_t, kBlockHeaderSize> encodeBlockHeader(BlockType type, ByteSpan payload) {
  std::array<uint8_t, kBlockHeaderSize> h{};
  putU32(h.data(), kBlockSync);
  h[4] = static_cast<uint8_t>(type);
  putU32(h.data() + 8, static_cast<uint32_t>(payload.size()));
  putU32(h.data() + 12, static_cast<uint32_t>(hashBytes(ByteSpan(h.data(), 12))));
  putU64(h.data() + 16, hashBytes(payload));
  return h;
}

Result<BlockHeader> parseBlockHeader(ByteSpan bytes) {
  if (bytes.size() < kBlockHeaderSize) return Error("block header cut short");
  const uint8_t* p = bytes.data();
  if (getU32(p) != kBlockSync) return Error("no block sync word");
  if (getU32(p + 12) != static_cast<uint32_t>(hashBytes(ByteSpan(p, 12)))) {
    return Error("block header checksum mismatch");
  }
  BlockHeader h;
  h.type = static_cast<BlockType>(p[4]);
  if (p[4] < static_cast<uint8_t>(BlockType::kHeader) || p[4] > kLastBlockType) {
    return Error("unknown block type " + std::to_string(p[4]));
  }
  h.length = getU32(p + 8);
  if (h.length > kMaxBlockPayload) {
    return Error("block length " + std::to_string(h.length) + " exceeds the limit");
  }
  h.payload_hash = getU64(p + 16);
  return h;
}

bool payloadMatches(const BlockHeader& header, ByteSpan payload) {
  return payload.size() == header.length && hashBytes(payload) == header.payload_hash;
}

namespace {

// write(2) at the file position, or pwrite(2) at *offset, until done.
Status writeFully(int fd, const uint64_t* offset, ByteSpan bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const uint8_t* from = bytes.data() + done;
    size_t left = bytes.size() - done;
    ssize_t n = offset != nullptr ? ::pwrite(fd, from, left, static_cast<off_t>(*offset + done))
                                  : ::write(fd, from, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string at = offset != nullptr ? " at offset " + std::to_string(*offset + done) : "";
      return Error("writing " + path + at + ": " + std::strerror(errno));
    }
    if (n == 0) return Error("writing " + path + ": no progress");
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

}  // namespace

Status writeAll(int fd, ByteSpan bytes, const std::string& path) {
  return writeFully(fd, nullptr, bytes, path);
}

Status pwriteAll(int fd, uint64_t offset, ByteSpan bytes, const std::string& path) {
  return writeFully(fd, &offset, bytes, path);
}

Status preadAll(int fd, uint64_t offset, std::span<uint8_t> bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n =
        ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error("reading " + path + " at offset " + std::to_string(offset + done) + ": " +
                   std::strerror(errno));
    }
    if (n == 0) {
      return Error("offset " + std::to_string(offset) + ": file ends after " +
                   std::to_string(done) + " of " + std::to_string(bytes.size()) + " bytes");
    }
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

}  // namespace incise::format
