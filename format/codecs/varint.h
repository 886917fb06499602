// Unsigned LEB128 kernels shared by the varint and delta-varint codecs.
//
// Seven value bits per byte, low groups first; the top bit of a byte says
// "more follows". A uint64 takes 1..10 bytes.
//
//   uint8_t* end = putVarint(buffer, 300);          // writes AC 02
//   const uint8_t* p = buffer; uint64_t v;
//   if (!getVarint(p, end, v)) fail();              // v == 300, p == end
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"

namespace incise::format::codecs {

inline constexpr size_t kMaxVarintBytes = 10;

inline uint8_t* putVarint(uint8_t* out, uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<uint8_t>(value) | 0x80;
    value >>= 7;
  }
  *out++ = static_cast<uint8_t>(value);
  return out;
}

// Reads one varint at `p`, never past `end`; false on a short or overlong
// (more than 10 bytes, or bits beyond 64) encoding.
inline bool getVarint(const uint8_t*& p, const uint8_t* end, uint64_t& value) {
  if (p < end && *p < 0x80) {  // the common one-byte case
    value = *p++;
    return true;
  }
  uint64_t result = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (p >= end) return false;
    uint8_t byte = *p++;
    if (shift == 63 && byte > 1) return false;
    result |= uint64_t{byte & 0x7fu} << shift;
    if (byte < 0x80) {
      value = result;
      return true;
    }
  }
  return false;
}

// Whole-column kernels: every value as one varint, and back. `what` names a
// value in the error ("value", "blob length").
inline size_t putVarints(std::span<const uint64_t> values, uint8_t* out) {
  uint8_t* p = out;
  for (uint64_t v : values) p = putVarint(p, v);
  return static_cast<size_t>(p - out);
}

inline Result<size_t> getVarints(std::span<const uint8_t> bytes, size_t rows, uint64_t* out,
                                 const char* what) {
  const uint8_t* p = bytes.data();
  const uint8_t* end = p + bytes.size();
  for (size_t i = 0; i < rows; ++i) {
    if (!getVarint(p, end, out[i])) {
      return Error(std::string(what) + " " + std::to_string(i) + " of " + std::to_string(rows) +
                   " runs past the end or is malformed");
    }
  }
  return static_cast<size_t>(p - bytes.data());
}

inline uint64_t zigzag(uint64_t delta) {
  return (delta << 1) ^ static_cast<uint64_t>(static_cast<int64_t>(delta) >> 63);
}
inline uint64_t unzigzag(uint64_t encoded) {
  return (encoded >> 1) ^ (~(encoded & 1) + 1);
}

}  // namespace incise::format::codecs
