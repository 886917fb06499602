// Column codecs: how a column of uint64 values becomes bytes on disk.
//
// Two small interfaces, ClickHouse style. A ValueCodec turns values into
// bytes (format::Encoding: varint, delta varint, fixed64); a Compressor turns
// bytes into fewer bytes (format::Compression: none, zstd). They are two
// interfaces, not one, because their inputs differ (values vs bytes) and a
// column always goes through exactly one of each. The public non-virtual
// encode/decode/compress/decompress own the bounds checks, so each codec
// implements only its kernel. Decoders distrust their input: a short buffer,
// trailing bytes or a wrong row count is an Error, never a crash.
//
// Each codec lives in its own .cc with its byte layout and a worked example,
// and registers itself through registerXCodec(Registry&), called from the one
// list in codec_registry.cc. The registry rejects a repeated id.
//
//   const auto& registry = codecs::Registry::instance();
//   std::string bytes;
//   registry.encoding(Encoding::kDeltaVarint)->encode(times, bytes);
//   std::vector<uint64_t> back;
//   Status s = registry.encoding(Encoding::kDeltaVarint)->decode(asBytes(bytes), times.size(),
//   back);
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "format/event_kinds.h"

namespace incise::format::codecs {

using ByteSpan = std::span<const uint8_t>;

inline ByteSpan asBytes(std::string_view s) {
  return ByteSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// The largest column we accept after decompression: a sane bound on top of
// ColumnRef.rawBytes, so a corrupt size cannot make us allocate gigabytes.
inline constexpr size_t kMaxRawColumnBytes = 256u << 20;

// The most values a kConstant column may hold (8 MB decoded): its bytes do
// not bound its row count, so this does. The chunk encoder stores a longer
// constant column another way.
inline constexpr size_t kMaxConstantValues = size_t{1} << 20;

// True when every value equals the first (and for an empty span).
bool allEqual(std::span<const uint64_t> values);  // constant_codec.cc

class ValueCodec {
 public:
  virtual ~ValueCodec() = default;
  virtual Encoding id() const = 0;
  virtual std::string_view name() const = 0;
  // Fewest bytes one value can take; bounds the row count a buffer can hold.
  virtual size_t minBytesPerValue() const = 0;
  virtual size_t maxBytesPerValue() const = 0;
  // The most values `bytes` bytes can decode to: checked before anything is
  // allocated. A codec whose values take no bytes of their own (kConstant)
  // bounds them another way.
  virtual size_t maxValues(size_t bytes) const { return bytes / minBytesPerValue(); }

  // Appends the encoding of `values` to `out`.
  void encode(std::span<const uint64_t> values, std::string& out) const;
  // Decodes exactly `rows` values into `out` (resized); the buffer must hold
  // exactly those values, no fewer bytes and no trailing ones.
  Status decode(ByteSpan bytes, size_t rows, std::vector<uint64_t>& out) const;

 private:
  // Writes at most values.size() * maxBytesPerValue() bytes at `out`;
  // returns the number written.
  virtual size_t doEncode(std::span<const uint64_t> values, uint8_t* out) const = 0;
  // Fills out[0..rows); returns bytes consumed, or an Error when the input
  // runs out or is malformed. Must never read past bytes.end().
  virtual Result<size_t> doDecode(ByteSpan bytes, size_t rows, uint64_t* out) const = 0;
};

class Compressor {
 public:
  virtual ~Compressor() = default;
  virtual Compression id() const = 0;
  virtual std::string_view name() const = 0;

  // Replaces `out` with the compressed form of `raw`.
  Status compress(ByteSpan raw, int level, std::string& out) const;
  // Replaces `out` with the decompressed `stored`, which must come to exactly
  // `raw_bytes` (at most kMaxRawColumnBytes).
  Status decompress(ByteSpan stored, size_t raw_bytes, std::string& out) const;
  // Rejects `stored` when its own header contradicts `raw_bytes`, before a
  // buffer is sized for the claim (4 KB claiming 256 MB was a fuzz timeout).
  virtual Status checkClaim(ByteSpan stored, size_t raw_bytes) const;
  // The same into `out`, exactly raw_bytes long, owned by the caller (no
  // zero-fill, no copy: byte-blob columns decompress into chunk storage).
  Status decompress(ByteSpan stored, std::span<uint8_t> out) const;

 private:
  virtual Status doCompress(ByteSpan raw, int level, std::string& out) const = 0;
  // `out` is already sized to raw_bytes; returns the bytes produced.
  virtual Result<size_t> doDecompress(ByteSpan stored, std::span<uint8_t> out) const = 0;
};

class Registry {
 public:
  Status add(std::unique_ptr<ValueCodec> codec);
  Status add(std::unique_ptr<Compressor> compressor);
  // nullptr for an id this build does not know.
  const ValueCodec* encoding(Encoding id) const;
  const Compressor* compression(Compression id) const;

  // Every codec of this build, registered from the list in codec_registry.cc.
  static const Registry& instance();

 private:
  std::vector<std::unique_ptr<ValueCodec>> codecs_;
  std::vector<std::unique_ptr<Compressor>> compressors_;
};

void registerVarintCodec(Registry& registry);
void registerDeltaVarintCodec(Registry& registry);
void registerFixed64Codec(Registry& registry);
void registerByteBlobCodec(Registry& registry);  // byte_blob_codec.cc
void registerConstantCodec(Registry& registry);
void registerPeriodDeltaCodec(Registry& registry);
void registerBaseDeltaCodec(Registry& registry);
void registerNoCompression(Registry& registry);
void registerZstdCompression(Registry& registry);

}  // namespace incise::format::codecs
