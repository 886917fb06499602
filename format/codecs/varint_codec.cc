// Encoding::kVarint: each value as unsigned LEB128, nothing else.
//
// Byte layout: value[0] value[1] ... each 1..10 bytes; 7 bits per byte, low
// group first, top bit set on every byte but a value's last.
//
// Worked example: {1, 127, 128, 300}
//   1   -> 01
//   127 -> 7F
//   128 -> 80 01        (0000000 | 1<<7)
//   300 -> AC 02        (300 = 0b10_0101100: 0101100|0x80, then 10)
//   bytes: 01 7F 80 01 AC 02
//
// Suits small ids and counts: cpu, pid, tid, stack ids, enums.
#include "format/codecs/codec.h"
#include "format/codecs/varint.h"

namespace incise::format::codecs {
namespace {

class VarintCodec final : public ValueCodec {
 public:
  Encoding id() const override { return Encoding::kVarint; }
  std::string_view name() const override { return "varint"; }
  size_t minBytesPerValue() const override { return 1; }
  size_t maxBytesPerValue() const override { return kMaxVarintBytes; }

 private:
  size_t doEncode(std::span<const uint64_t> values, uint8_t* out) const override {
    return putVarints(values, out);
  }

  Result<size_t> doDecode(ByteSpan bytes, size_t rows, uint64_t* out) const override {
    return getVarints(bytes, rows, out, "value");
  }
};

}  // namespace

void registerVarintCodec(Registry& registry) {
  Status s = registry.add(std::make_unique<VarintCodec>());
  assert(s.isOk());
  (void)s;
}

}  // namespace incise::format::codecs
