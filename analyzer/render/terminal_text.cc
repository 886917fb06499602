#include "analyzer/render/terminal_text.h"

#include <cstdint>

namespace incise::analyzer {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// The length of the well-formed UTF-8 sequence at text[i] and its code
// point, or 0 when the bytes there are not one (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF).
size_t decodeUtf8(std::string_view text, size_t i, uint32_t& code_point) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[i + k]); };
  const auto continuation = [&](size_t k) {
    return i + k < text.size() && (byte(k) & 0xC0) == 0x80;
  };
  uint8_t lead = byte(0);
  if (lead >= 0xC2 && lead <= 0xDF && continuation(1)) {
    code_point = (uint32_t{lead} & 0x1F) << 6 | (byte(1) & 0x3F);
    return 2;
  }
  if (lead >= 0xE0 && lead <= 0xEF && continuation(1) && continuation(2)) {
    code_point = (uint32_t{lead} & 0x0F) << 12 | uint32_t{byte(1) & 0x3Fu} << 6 | (byte(2) & 0x3F);
    if (code_point < 0x800 || (code_point >= 0xD800 && code_point <= 0xDFFF)) return 0;
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4 && continuation(1) && continuation(2) && continuation(3)) {
    code_point = (uint32_t{lead} & 0x07) << 18 | uint32_t{byte(1) & 0x3Fu} << 12 |
                 uint32_t{byte(2) & 0x3Fu} << 6 | (byte(3) & 0x3F);
    if (code_point < 0x10000 || code_point > 0x10FFFF) return 0;
    return 4;
  }
  return 0;
}

bool hiddenCodePoint(uint32_t code_point) {
  return (code_point >= 0x80 && code_point <= 0x9F) ||      // C1 controls
         (code_point >= 0x202A && code_point <= 0x202E) ||  // bidi embeddings and overrides
         (code_point >= 0x2066 && code_point <= 0x2069);    // bidi isolates
}

void appendByteEscape(std::string& out, uint8_t byte) {
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xF];
}

void appendCodePointEscape(std::string& out, uint32_t code_point) {
  out += "\\u{";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code_point >> shift) & 0xF];
  out += '}';
}

bool printableAscii(char c) {
  return c >= 0x20 && c < 0x7F;
}

}  // namespace

void appendTerminalText(std::string& out, std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    // Runs of plain ASCII, the common case, are copied as they are.
    size_t run = i;
    while (run < text.size() && printableAscii(text[run])) ++run;
    out.append(text, i, run - i);
    i = run;
    if (i == text.size()) break;
    const auto byte = static_cast<uint8_t>(text[i]);
    if (byte < 0x80) {
      appendByteEscape(out, byte);  // a C0 control or DEL
      ++i;
      continue;
    }
    uint32_t code_point = 0;
    size_t length = decodeUtf8(text, i, code_point);
    if (length == 0) {
      appendByteEscape(out, byte);
      ++i;
    } else if (hiddenCodePoint(code_point)) {
      appendCodePointEscape(out, code_point);
      i += length;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
}

std::string terminalText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  appendTerminalText(out, text);
  return out;
}

bool isTerminalSafe(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (printableAscii(text[i])) {
      ++i;
      continue;
    }
    uint32_t code_point = 0;
    size_t length = static_cast<uint8_t>(text[i]) < 0x80 ? 0 : decodeUtf8(text, i, code_point);
    if (length == 0 || hiddenCodePoint(code_point)) return false;
    i += length;
  }
  return true;
}

}  // namespace incise::analyzer
