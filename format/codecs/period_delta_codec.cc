// Encoding::kPeriodDelta (format 2.0): differences split into a multiple of a
// period and a remainder, for times that tick at a sampling period.
//
// Each difference d[i] = v[i] - v[i-1] (v[-1] = 0, wrapping modulo 2^64, read
// as signed) is written as d = q * P + r with r the remainder nearest zero
// (|r| <= P/2). The encoder takes P = the median of the positive differences
// (1 when there are none), so a cpu's samples 1,001,001 ns apart give q = 1
// and a small r, and a skipped tick q = 2.
//
// Byte layout (n values, nothing at all for n = 0):
//   varint(P)  u8 width  varint(zigzag(q[0])) ... varint(zigzag(q[n-1]))
//   plane 0: byte 0 of zigzag(r[0]) ... zigzag(r[n-1])   (n bytes)
//   ...
//   plane width-1: byte width-1 of each                   (n bytes)
// width (0..8) is the byte count of the largest zigzag(r); width 0 means
// every r is 0. The remainders go in byte planes, not varints, because zstd
// codes each plane's bytes near their entropy: the low byte of a timer's
// jitter is noise, the higher ones are mostly alike.
//
// Worked example: {1000, 2010, 2990}, P = 1000 (differences 1000, 1010, 980)
//   q: 1, 1, 1 -> zigzag 02 02 02;  r: 0, 10, -20 -> zigzag 0, 20, 39
//   bytes: E8 07 | 01 | 02 02 02 | 00 14 27
//
// Every value round-trips exactly (q * P + r is d modulo 2^64); only the
// size depends on the times being periodic.
#include <algorithm>
#include <cassert>
#include <vector>

#include "format/codecs/codec.h"
#include "format/codecs/varint.h"

namespace incise::format::codecs {
namespace {

constexpr size_t kMaxWidth = 8;
// varint(P), width, then per value at most a 10-byte q and 8 remainder bytes.
constexpr size_t kHeaderBytes = kMaxVarintBytes + 1;

uint64_t medianPositiveDifference(std::span<const uint64_t> values) {
  std::vector<uint64_t> positive;
  positive.reserve(values.size());
  for (size_t i = 1; i < values.size(); ++i) {
    auto d = static_cast<int64_t>(values[i] - values[i - 1]);
    if (d > 0) positive.push_back(static_cast<uint64_t>(d));
  }
  if (positive.empty()) return 1;
  auto middle = positive.begin() + static_cast<std::ptrdiff_t>(positive.size() / 2);
  std::nth_element(positive.begin(), middle, positive.end());
  return *middle;
}

unsigned byteWidth(uint64_t value) {
  unsigned width = 0;
  while (value != 0) {
    ++width;
    value >>= 8;
  }
  return width;
}

class PeriodDeltaCodec final : public ValueCodec {
 public:
  Encoding id() const override { return Encoding::kPeriodDelta; }
  std::string_view name() const override { return "period-delta"; }
  size_t minBytesPerValue() const override { return 1; }
  // The header is charged to the first value.
  size_t maxBytesPerValue() const override { return kHeaderBytes + kMaxVarintBytes + kMaxWidth; }

 private:
  size_t doEncode(std::span<const uint64_t> values, uint8_t* out) const override {
    if (values.empty()) return 0;
    const uint64_t period = medianPositiveDifference(values);  // 1..2^63-1
    const auto p = static_cast<int64_t>(period);
    std::vector<uint64_t> remainders(values.size());
    uint8_t* at = putVarint(out, period);
    uint8_t* width_at = at++;
    uint64_t widest = 0;
    uint64_t previous = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      auto d = static_cast<int64_t>(values[i] - previous);
      previous = values[i];
      int64_t q = d / p;  // |q * p| <= |d|: no overflow
      int64_t r = d - q * p;
      // Nearest multiple; p >= 2 whenever r != 0, so q +- 1 cannot overflow.
      if (r > p / 2) {
        r -= p;
        ++q;
      } else if (r < -(p / 2)) {
        r += p;
        --q;
      }
      at = putVarint(at, zigzag(static_cast<uint64_t>(q)));
      remainders[i] = zigzag(static_cast<uint64_t>(r));
      widest |= remainders[i];
    }
    unsigned width = byteWidth(widest);
    *width_at = static_cast<uint8_t>(width);
    for (unsigned plane = 0; plane < width; ++plane) {
      for (uint64_t r : remainders) *at++ = static_cast<uint8_t>(r >> (8 * plane));
    }
    return static_cast<size_t>(at - out);
  }

  Result<size_t> doDecode(ByteSpan bytes, size_t rows, uint64_t* out) const override {
    if (rows == 0) return size_t{0};
    const uint8_t* p = bytes.data();
    const uint8_t* end = p + bytes.size();
    uint64_t period;
    if (!getVarint(p, end, period) || period == 0) return Error("missing or zero period");
    if (p >= end) return Error("missing remainder width");
    unsigned width = *p++;
    if (width > kMaxWidth) return Error("remainder width " + std::to_string(width) + " over 8");
    uint64_t previous = 0;
    for (size_t i = 0; i < rows; ++i) {
      uint64_t q;
      if (!getVarint(p, end, q)) {
        return Error("multiple " + std::to_string(i) + " of " + std::to_string(rows) +
                     " runs past the end or is malformed");
      }
      previous += unzigzag(q) * period;  // wraps modulo 2^64 like the encoder's d
      out[i] = previous;
    }
    if (width != 0 && static_cast<size_t>(end - p) / width < rows) {
      return Error(std::to_string(rows) + " remainders of " + std::to_string(width) +
                   " bytes run past the end");
    }
    // out[i] holds the sum of the multiples so far; add the remainders' running sum.
    uint64_t carried = 0;
    for (size_t i = 0; i < rows; ++i) {
      uint64_t r = 0;
      for (unsigned plane = 0; plane < width; ++plane) {
        r |= uint64_t{p[plane * rows + i]} << (8 * plane);
      }
      carried += unzigzag(r);
      out[i] += carried;
    }
    return static_cast<size_t>(p - bytes.data()) + size_t{width} * rows;
  }
};

}  // namespace

void registerPeriodDeltaCodec(Registry& registry) {
  Status s = registry.add(std::make_unique<PeriodDeltaCodec>());
  assert(s.isOk());
  (void)s;
}

}  // namespace incise::format::codecs
