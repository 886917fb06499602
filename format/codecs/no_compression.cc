// Compression::kNone: the stored bytes are the encoded bytes.
//
// Byte layout: identical to the input. Used when zstd would not shrink a
// column (already dense data, or tiny columns where the frame overhead wins).
//
// Worked example: 01 7F 80 01 -> 01 7F 80 01
#include <cstring>

#include "format/codecs/codec.h"

namespace incise::format::codecs {
namespace {

class NoCompression final : public Compressor {
 public:
  Compression id() const override { return Compression::kNone; }
  std::string_view name() const override { return "none"; }

 private:
  Status doCompress(ByteSpan raw, int /*level*/, std::string& out) const override {
    out.assign(reinterpret_cast<const char*>(raw.data()), raw.size());
    return Status::ok();
  }

  Result<size_t> doDecompress(ByteSpan stored, std::span<uint8_t> out) const override {
    if (stored.size() != out.size()) {
      return Error("stored " + std::to_string(stored.size()) + " bytes, expected " +
                   std::to_string(out.size()));
    }
    if (!stored.empty()) std::memcpy(out.data(), stored.data(), stored.size());
    return stored.size();
  }
};

}  // namespace

void registerNoCompression(Registry& registry) {
  Status s = registry.add(std::make_unique<NoCompression>());
  assert(s.isOk());
  (void)s;
}

}  // namespace incise::format::codecs
