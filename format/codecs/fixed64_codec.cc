// Encoding::kFixed64: each value as 8 little-endian bytes.
//
// Byte layout: v[0] as u64 LE, v[1] as u64 LE, ...; the buffer length must
// be exactly 8 x rows.
//
// Worked example: {1, 0x1122334455667788}
//   bytes: 01 00 00 00 00 00 00 00  88 77 66 55 44 33 22 11
//
// Suits values with no structure a varint could use (hashes, random ids).
#include <cstring>

#include "format/codecs/codec.h"

namespace incise::format::codecs {
namespace {

class Fixed64Codec final : public ValueCodec {
 public:
  Encoding id() const override { return Encoding::kFixed64; }
  std::string_view name() const override { return "fixed64"; }
  size_t minBytesPerValue() const override { return 8; }
  size_t maxBytesPerValue() const override { return 8; }

 private:
  size_t doEncode(std::span<const uint64_t> values, uint8_t* out) const override {
    uint8_t* p = out;
    for (uint64_t v : values) {
      for (int b = 0; b < 8; ++b) *p++ = static_cast<uint8_t>(v >> (8 * b));
    }
    return static_cast<size_t>(p - out);
  }

  Result<size_t> doDecode(ByteSpan bytes, size_t rows, uint64_t* out) const override {
    if (bytes.size() < rows * 8) {
      return Error(std::to_string(rows) + " values need " + std::to_string(rows * 8) +
                   " bytes, have " + std::to_string(bytes.size()));
    }
    const uint8_t* p = bytes.data();
    for (size_t i = 0; i < rows; ++i, p += 8) {
      uint64_t v = 0;
      for (int b = 7; b >= 0; --b) v = (v << 8) | p[b];
      out[i] = v;
    }
    return rows * 8;
  }
};

}  // namespace

void registerFixed64Codec(Registry& registry) {
  Status s = registry.add(std::make_unique<Fixed64Codec>());
  assert(s.isOk());
  (void)s;
}

}  // namespace incise::format::codecs
