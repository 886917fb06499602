#include "objfile/fde_ranges.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

namespace incise::objfile {
namespace {

// DW_EH_PE_* pointer encodings (LSB Core, .eh_frame): the low nibble is the
// value's format, the next three bits what it is relative to.
constexpr uint8_t kOmit = 0xff;
constexpr uint8_t kFormatMask = 0x0f;
constexpr uint8_t kApplicationMask = 0x70;
constexpr uint8_t kAbsolute = 0x00, kUleb128 = 0x01, kUdata2 = 0x02, kUdata4 = 0x03, kUdata8 = 0x04,
                  kSleb128 = 0x09, kSdata2 = 0x0a, kSdata4 = 0x0b, kSdata8 = 0x0c;
constexpr uint8_t kPcRelative = 0x10;

// A cursor over the section that fails (returns nullopt) instead of reading
// past `end`.
class Cursor {
 public:
  Cursor(std::string_view bytes, size_t at, size_t end) : bytes_(bytes), at_(at), end_(end) {}
  size_t position() const { return at_; }
  bool skip(size_t n) {
    if (n > end_ - at_) return false;
    at_ += n;
    return true;
  }
  template <typename T>
  std::optional<T> fixed() {
    if (sizeof(T) > end_ - at_) return std::nullopt;
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  std::optional<uint64_t> uleb() {
    uint64_t value = 0;
    for (unsigned shift = 0; at_ < end_; shift += 7) {
      const auto byte = static_cast<uint8_t>(bytes_[at_++]);
      if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return std::nullopt;
  }
  std::optional<int64_t> sleb() {
    uint64_t value = 0;
    unsigned shift = 0;
    while (at_ < end_) {
      const auto byte = static_cast<uint8_t>(bytes_[at_++]);
      if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
      shift += 7;
      if ((byte & 0x80) == 0) {
        if (shift < 64 && (byte & 0x40) != 0) value |= ~uint64_t{0} << shift;
        return static_cast<int64_t>(value);
      }
    }
    return std::nullopt;
  }
  std::optional<std::string_view> cString() {
    const void* nul = std::memchr(bytes_.data() + at_, '\0', end_ - at_);
    if (nul == nullptr) return std::nullopt;
    const size_t length = static_cast<size_t>(static_cast<const char*>(nul) - bytes_.data()) - at_;
    std::string_view text = bytes_.substr(at_, length);
    at_ += length + 1;
    return text;
  }
  // A value in `encoding`'s format, before any relative base is added.
  std::optional<uint64_t> encodedValue(uint8_t encoding) {
    switch (encoding & kFormatMask) {
      case kAbsolute:
      case kUdata8:
      case kSdata8:
        return fixed<uint64_t>();
      case kUleb128:
        return uleb();
      case kSleb128: {
        auto value = sleb();
        if (!value) return std::nullopt;
        return static_cast<uint64_t>(*value);
      }
      case kUdata2:
        if (auto value = fixed<uint16_t>()) return *value;
        return std::nullopt;
      case kSdata2:
        if (auto value = fixed<int16_t>()) return static_cast<uint64_t>(int64_t{*value});
        return std::nullopt;
      case kUdata4:
        if (auto value = fixed<uint32_t>()) return *value;
        return std::nullopt;
      case kSdata4:
        if (auto value = fixed<int32_t>()) return static_cast<uint64_t>(int64_t{*value});
        return std::nullopt;
      default:
        return std::nullopt;
    }
  }

 private:
  std::string_view bytes_;
  size_t at_;
  size_t end_;
};

struct Cie {
  uint8_t fde_encoding = kAbsolute;
  bool has_augmentation_data = false;
};

// The CIE at `offset`; nullopt when it is malformed or of a kind not read
// here (a pointer encoding relative to text or data, which .eh_frame of
// x86-64 objects does not use).
std::optional<Cie> readCie(std::string_view bytes, size_t offset) {
  Cursor at(bytes, offset, bytes.size());
  auto length32 = at.fixed<uint32_t>();
  if (!length32 || *length32 == 0) return std::nullopt;
  uint64_t length = *length32;
  if (*length32 == 0xffffffff) {
    auto length64 = at.fixed<uint64_t>();
    if (!length64) return std::nullopt;
    length = *length64;
  }
  if (length > bytes.size() - at.position()) return std::nullopt;
  Cursor cie(bytes, at.position(), at.position() + length);
  const bool wide = *length32 == 0xffffffff;
  if (!cie.skip(wide ? 8 : 4)) return std::nullopt;  // CIE id
  auto version = cie.fixed<uint8_t>();
  auto augmentation = cie.cString();
  if (!version || !augmentation) return std::nullopt;
  if (augmentation->find("eh") != std::string_view::npos && !cie.skip(8)) return std::nullopt;
  if (!cie.uleb() || !cie.sleb()) return std::nullopt;  // code and data alignment
  if (*version == 1 ? !cie.fixed<uint8_t>() : !cie.uleb()) return std::nullopt;
  Cie result;
  if (augmentation->empty() || augmentation->front() != 'z') return result;
  result.has_augmentation_data = true;
  if (!cie.uleb()) return std::nullopt;  // augmentation data length
  for (char c : augmentation->substr(1)) {
    if (c == 'R') {
      auto encoding = cie.fixed<uint8_t>();
      if (!encoding) return std::nullopt;
      result.fde_encoding = *encoding;
    } else if (c == 'L') {
      if (!cie.fixed<uint8_t>()) return std::nullopt;
    } else if (c == 'P') {
      auto encoding = cie.fixed<uint8_t>();
      if (!encoding || *encoding == kOmit) return std::nullopt;
      if (!cie.encodedValue(*encoding)) return std::nullopt;
    } else if (c != 'S' && c != 'B') {
      break;  // an augmentation we do not know: the rest cannot be parsed
    }
  }
  const uint8_t application = result.fde_encoding & kApplicationMask;
  if (application != kAbsolute && application != kPcRelative) return std::nullopt;
  return result;
}

}  // namespace

std::vector<FunctionRange> readFdeRanges(std::string_view bytes, uint64_t vaddr) {
  std::vector<FunctionRange> ranges;
  std::unordered_map<size_t, std::optional<Cie>> cies;
  size_t offset = 0;
  while (bytes.size() - offset >= 4) {
    Cursor at(bytes, offset, bytes.size());
    auto length32 = at.fixed<uint32_t>();
    if (!length32 || *length32 == 0) break;  // the terminator
    uint64_t length = *length32;
    const bool wide = *length32 == 0xffffffff;
    if (wide) {
      auto length64 = at.fixed<uint64_t>();
      if (!length64) break;
      length = *length64;
    }
    const size_t body = at.position();
    if (length > bytes.size() - body) break;
    const size_t next = body + length;
    Cursor entry(bytes, body, next);
    std::optional<uint64_t> id;
    if (wide) {
      id = entry.fixed<uint64_t>();
    } else if (auto id32 = entry.fixed<uint32_t>()) {
      id = *id32;
    }
    if (!id) break;
    if (*id != 0) {
      // An FDE: its id is the distance back from the id field to its CIE.
      if (*id <= body) {
        const size_t cie_offset = body - *id;
        auto [known, inserted] = cies.try_emplace(cie_offset);
        if (inserted) known->second = readCie(bytes, cie_offset);
        if (const std::optional<Cie>& cie = known->second) {
          const uint64_t field_vaddr = vaddr + entry.position();
          auto start = entry.encodedValue(cie->fde_encoding);
          auto size = entry.encodedValue(cie->fde_encoding & kFormatMask);
          if (start && size) {
            if ((cie->fde_encoding & kApplicationMask) == kPcRelative) *start += field_vaddr;
            if (*size != 0 && *start + *size > *start) ranges.push_back({*start, *start + *size});
          }
        }
      }
    }
    offset = next;
  }
  std::sort(ranges.begin(), ranges.end(), [](const FunctionRange& a, const FunctionRange& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  ranges.erase(std::unique(ranges.begin(), ranges.end(),
                           [](const FunctionRange& a, const FunctionRange& b) {
                             return a.start == b.start;
                           }),
               ranges.end());
  return ranges;
}

const FunctionRange* findFunctionRange(const std::vector<FunctionRange>& sorted, uint64_t address) {
  auto after = std::upper_bound(sorted.begin(), sorted.end(), address,
                                [](uint64_t a, const FunctionRange& r) { return a < r.start; });
  // Ranges may nest or overlap (hand-written assembly); the nearest start
  // below holds the address when any does, else look one further back.
  for (int step = 0; step < 2 && after != sorted.begin(); ++step) {
    --after;
    if (address < after->end) return &*after;
  }
  return nullptr;
}

}  // namespace incise::objfile
