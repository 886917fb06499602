#include "format/message_payload.h"

#include "format/block_io.h"

namespace incise::format {

namespace {
constexpr size_t kPrefixBytes = 5;
}

std::string packMessage(const std::string& message, int zstd_level) {
  const auto& registry = codecs::Registry::instance();
  std::string stored;
  Compression compression = Compression::kZstd;
  Status s = registry.compression(Compression::kZstd)
                 ->compress(codecs::asBytes(message), zstd_level, stored);
  if (!s || stored.size() >= message.size()) {
    compression = Compression::kNone;
    stored = message;
  }
  std::string payload(kPrefixBytes, '\0');
  payload[0] = static_cast<char>(compression);
  putU32(reinterpret_cast<uint8_t*>(payload.data() + 1), static_cast<uint32_t>(message.size()));
  payload += stored;
  return payload;
}

Result<std::string> unpackMessage(codecs::ByteSpan payload) {
  if (payload.size() < kPrefixBytes) return Error("message payload shorter than its prefix");
  auto compression = static_cast<Compression>(payload[0]);
  const codecs::Compressor* compressor = codecs::Registry::instance().compression(compression);
  if (compressor == nullptr) {
    return Error("unknown message compression " + std::to_string(payload[0]));
  }
  uint32_t raw_size = getU32(payload.data() + 1);
  std::string message;
  INCISE_RETURN_IF_ERROR(compressor->decompress(payload.subspan(kPrefixBytes), raw_size, message));
  return message;
}

}  // namespace incise::format
