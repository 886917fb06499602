// Encoding::kDeltaVarint: zigzag(v[i] - v[i-1]) as unsigned LEB128, v[-1] = 0.
//
// Byte layout: varint(zigzag(d0)) varint(zigzag(d1)) ...; differences wrap
// modulo 2^64 and zigzag maps small negative differences to small numbers
// (0->0, -1->1, 1->2, -2->3, ...).
//
// Worked example: {1000, 1003, 1001, 1001}
//   deltas  1000, 3, -2, 0
//   zigzag  2000, 6,  3, 0
//   bytes:  D0 0F 06 03 00     (2000 = 0b1111_1010000: 1010000|0x80 = D0, 1111 = 0F)
//
// Suits timestamps (sorted, so deltas are small) and addresses that repeat.
#include "format/codecs/codec.h"
#include "format/codecs/varint.h"

namespace incise::format::codecs {
namespace {

class DeltaVarintCodec final : public ValueCodec {
 public:
  Encoding id() const override { return Encoding::kDeltaVarint; }
  std::string_view name() const override { return "delta-varint"; }
  size_t minBytesPerValue() const override { return 1; }
  size_t maxBytesPerValue() const override { return kMaxVarintBytes; }

 private:
  size_t doEncode(std::span<const uint64_t> values, uint8_t* out) const override {
    uint8_t* p = out;
    uint64_t previous = 0;
    for (uint64_t v : values) {
      p = putVarint(p, zigzag(v - previous));
      previous = v;
    }
    return static_cast<size_t>(p - out);
  }

  Result<size_t> doDecode(ByteSpan bytes, size_t rows, uint64_t* out) const override {
    const uint8_t* p = bytes.data();
    const uint8_t* end = p + bytes.size();
    uint64_t previous = 0;
    for (size_t i = 0; i < rows; ++i) {
      uint64_t encoded;
      if (!getVarint(p, end, encoded)) {
        return Error("value " + std::to_string(i) + " of " + std::to_string(rows) +
                     " runs past the end or is malformed");
      }
      previous += unzigzag(encoded);
      out[i] = previous;
    }
    return static_cast<size_t>(p - bytes.data());
  }
};

}  // namespace

void registerDeltaVarintCodec(Registry& registry) {
  Status s = registry.add(std::make_unique<DeltaVarintCodec>());
  assert(s.isOk());
  (void)s;
}

}  // namespace incise::format::codecs
