// Encoding::kBytes: see byte_blob_codec.h for the layout.
#include "format/codecs/byte_blob_codec.h"

#include <cassert>

#include "format/codecs/varint.h"

namespace incise::format::codecs {

namespace {

// The lengths part of a kBytes column, as a ValueCodec (LEB128 like
// kVarint), so the registry knows every encoding the event model uses and
// `incise info` can name it. The bytes that follow are encodeBlobs' job.
class BlobLengthsCodec final : public ValueCodec {
 public:
  Encoding id() const override { return Encoding::kBytes; }
  std::string_view name() const override { return "bytes"; }
  size_t minBytesPerValue() const override { return 1; }
  size_t maxBytesPerValue() const override { return kMaxVarintBytes; }

 private:
  size_t doEncode(std::span<const uint64_t> values, uint8_t* out) const override {
    return putVarints(values, out);
  }
  Result<size_t> doDecode(ByteSpan bytes, size_t rows, uint64_t* out) const override {
    return getVarints(bytes, rows, out, "blob length");
  }
};

}  // namespace

void registerByteBlobCodec(Registry& registry) {
  Status s = registry.add(std::make_unique<BlobLengthsCodec>());
  assert(s.isOk());
  (void)s;
}

Status encodeBlobs(std::span<const uint64_t> lengths, std::string_view bytes, std::string& out) {
  uint64_t total = 0;
  for (uint64_t length : lengths) total += length;
  if (total != bytes.size()) {
    return Error("blob lengths add up to " + std::to_string(total) + " bytes, the column holds " +
                 std::to_string(bytes.size()));
  }
  size_t start = out.size();
  out.resize(start + lengths.size() * kMaxVarintBytes);
  auto* begin = reinterpret_cast<uint8_t*>(out.data() + start);
  uint8_t* p = begin;
  for (uint64_t length : lengths) p = putVarint(p, length);
  out.resize(start + static_cast<size_t>(p - begin));
  out.append(bytes);
  return Status::ok();
}

Result<size_t> decodeBlobLengths(ByteSpan column, size_t rows, std::vector<uint64_t>& lengths) {
  if (rows > column.size()) {
    return Error(std::to_string(rows) + " blob lengths cannot fit in " +
                 std::to_string(column.size()) + " bytes");
  }
  lengths.resize(rows);
  const uint8_t* p = column.data();
  const uint8_t* end = p + column.size();
  uint64_t total = 0;
  for (size_t i = 0; i < rows; ++i) {
    if (!getVarint(p, end, lengths[i])) {
      return Error("blob length " + std::to_string(i) + " of " + std::to_string(rows) +
                   " runs past the end or is malformed");
    }
    if (lengths[i] > kMaxBlobBytes) {
      return Error("blob " + std::to_string(i) + " claims " + std::to_string(lengths[i]) +
                   " bytes, over the " + std::to_string(kMaxBlobBytes) + "-byte limit");
    }
    total += lengths[i];
  }
  auto left = static_cast<uint64_t>(end - p);
  if (total != left) {
    return Error("blob lengths add up to " + std::to_string(total) + " bytes, " +
                 std::to_string(left) + " follow them");
  }
  return static_cast<size_t>(p - column.data());
}

Status decodeBlobs(ByteSpan column, size_t rows, std::vector<uint64_t>& lengths,
                   std::string& bytes) {
  INCISE_ASSIGN_OR_RETURN(size_t at, decodeBlobLengths(column, rows, lengths));
  ByteSpan blobs = column.subspan(at);
  bytes.assign(reinterpret_cast<const char*>(blobs.data()), blobs.size());
  return Status::ok();
}

}  // namespace incise::format::codecs
