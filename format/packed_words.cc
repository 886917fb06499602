// Cap'n Proto's packing undone with bounds (capnp's own reader trusts the
// stream to say how much it holds).
//
// Packing, per 8-byte word: a tag byte whose bit i says byte i is non-zero,
// then those bytes. Tag 00 is followed by a count of further all-zero words;
// tag FF by a count of further words stored as they are (8 bytes each).
//
// Example: the words 01 00 00 00 00 00 00 00 | 00 x 8 | 00 x 8 pack to
//   01 01 | 00 01
#include "format/capnp_message.h"

namespace incise::format {

Result<std::string> unpackWords(codecs::ByteSpan packed, size_t max_bytes) {
  std::string out;
  const uint8_t* p = packed.data();
  const uint8_t* end = p + packed.size();
  auto tooLarge = [&] {
    return Error("packed message unpacks to more than " + std::to_string(max_bytes) + " bytes");
  };
  while (p < end) {
    uint8_t tag = *p++;
    if (max_bytes - out.size() < 8) return tooLarge();
    char word[8] = {};
    for (unsigned i = 0; i < 8; ++i) {
      if ((tag >> i & 1) == 0) continue;
      if (p >= end) return Error("packed word runs past the end");
      word[i] = static_cast<char>(*p++);
    }
    out.append(word, sizeof(word));
    if (tag != 0x00 && tag != 0xFF) continue;
    if (p >= end) return Error("packed run count missing at the end");
    size_t words = *p++;
    if ((max_bytes - out.size()) / 8 < words) return tooLarge();
    if (tag == 0x00) {
      out.append(words * 8, '\0');
    } else {
      if (static_cast<size_t>(end - p) / 8 < words) return Error("packed words run past the end");
      out.append(reinterpret_cast<const char*>(p), words * 8);
      p += words * 8;
    }
  }
  return out;
}

}  // namespace incise::format
