// Encoding::kConstant (format 2.0): a column whose values are all the same,
// stored as that value once. The row count comes from the chunk header.
//
// Byte layout: varint(value), nothing else, whatever the row count.
//
// Worked example: {1001001, 1001001, 1001001}
//   bytes: A9 8C 3D     (1001001 = 0b111101_0001100_0101001)
//
// Suits the columns a recording fills with one value (the pid of a
// single-process recording, the period, the user registers and stack copies
// of frame-pointer mode): a zstd frame of such a column still costs ~19
// bytes per chunk, this 1-10. Only the chunk encoder picks it, after
// checking every value is equal; encode() writes the first value only.
// Because the values take no bytes, decode() bounds the row count by
// kMaxConstantValues instead of by the buffer.
#include <algorithm>
#include <cassert>

#include "format/codecs/codec.h"
#include "format/codecs/varint.h"

namespace incise::format::codecs {
namespace {

class ConstantCodec final : public ValueCodec {
 public:
  Encoding id() const override { return Encoding::kConstant; }
  std::string_view name() const override { return "constant"; }
  size_t minBytesPerValue() const override { return 0; }
  size_t maxBytesPerValue() const override { return kMaxVarintBytes; }
  size_t maxValues(size_t bytes) const override { return bytes == 0 ? 0 : kMaxConstantValues; }

 private:
  size_t doEncode(std::span<const uint64_t> values, uint8_t* out) const override {
    if (values.empty()) return 0;
    return static_cast<size_t>(putVarint(out, values.front()) - out);
  }

  Result<size_t> doDecode(ByteSpan bytes, size_t rows, uint64_t* out) const override {
    if (rows == 0) return size_t{0};  // nothing to repeat: any byte is a trailing one
    const uint8_t* p = bytes.data();
    uint64_t value;
    if (!getVarint(p, bytes.data() + bytes.size(), value)) {
      return Error("the value runs past the end or is malformed");
    }
    std::fill(out, out + rows, value);
    return static_cast<size_t>(p - bytes.data());
  }
};

}  // namespace

bool allEqual(std::span<const uint64_t> values) {
  for (uint64_t v : values) {
    if (v != values.front()) return false;
  }
  return true;
}

void registerConstantCodec(Registry& registry) {
  Status s = registry.add(std::make_unique<ConstantCodec>());
  assert(s.isOk());
  (void)s;
}

}  // namespace incise::format::codecs
