// Encoding::kBaseDelta: each value as zigzag LEB128 of itself, no delta to
// the row before. The chunk codec hands it the differences from the rows'
// base column (baseColumn() in event_kinds.h) and adds the base back after
// decoding, so this kernel only sees small signed numbers.
//
// Byte layout: zigzag(value[0]) zigzag(value[1]) ... each as unsigned LEB128
// (see varint_codec.cc); zigzag maps 0, -1, 1, -2 ... to 0, 1, 2, 3 ...
//
// Worked example: pids {42, 42, 40} of tids {42, 43, 40}
//   differences {0, -1, 0} -> zigzag {0, 1, 0}
//   bytes: 00 01 00
//
// Suits a process id beside its thread id (0 for a main thread, a run of one
// value for another thread) and a wait's end beside its start.
#include <cassert>

#include "format/codecs/codec.h"
#include "format/codecs/varint.h"

namespace incise::format::codecs {
namespace {

class BaseDeltaCodec final : public ValueCodec {
 public:
  Encoding id() const override { return Encoding::kBaseDelta; }
  std::string_view name() const override { return "base-delta"; }
  size_t minBytesPerValue() const override { return 1; }
  size_t maxBytesPerValue() const override { return kMaxVarintBytes; }

 private:
  size_t doEncode(std::span<const uint64_t> values, uint8_t* out) const override {
    uint8_t* p = out;
    for (uint64_t v : values) p = putVarint(p, zigzag(v));
    return static_cast<size_t>(p - out);
  }

  Result<size_t> doDecode(ByteSpan bytes, size_t rows, uint64_t* out) const override {
    INCISE_ASSIGN_OR_RETURN(size_t used, getVarints(bytes, rows, out, "difference"));
    for (size_t i = 0; i < rows; ++i) out[i] = unzigzag(out[i]);
    return used;
  }
};

}  // namespace

void registerBaseDeltaCodec(Registry& registry) {
  Status s = registry.add(std::make_unique<BaseDeltaCodec>());
  assert(s.isOk());
  (void)s;
}

}  // namespace incise::format::codecs
