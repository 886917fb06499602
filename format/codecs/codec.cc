// The bounds-checking halves of ValueCodec and Compressor, and the Registry.
#include "format/codecs/codec.h"

#include <string>

namespace incise::format::codecs {

void ValueCodec::encode(std::span<const uint64_t> values, std::string& out) const {
  size_t start = out.size();
  out.resize(start + values.size() * maxBytesPerValue());
  size_t written = doEncode(values, reinterpret_cast<uint8_t*>(out.data()) + start);
  out.resize(start + written);
}

Status ValueCodec::decode(ByteSpan bytes, size_t rows, std::vector<uint64_t>& out) const {
  // Bound the allocation by what the buffer can possibly hold.
  if (rows > maxValues(bytes.size())) {
    return Error(std::string(name()) + ": " + std::to_string(bytes.size()) + " bytes cannot hold " +
                 std::to_string(rows) + " values");
  }
  out.resize(rows);
  Result<size_t> consumed = doDecode(bytes, rows, out.data());
  if (!consumed) return consumed.error().context(std::string(name()));
  if (*consumed != bytes.size()) {
    return Error(std::string(name()) + ": " + std::to_string(bytes.size() - *consumed) +
                 " trailing bytes after " + std::to_string(rows) + " values");
  }
  return Status::ok();
}

Status Compressor::checkClaim(ByteSpan, size_t) const {
  return Status::ok();
}

Status Compressor::compress(ByteSpan raw, int level, std::string& out) const {
  out.clear();
  return doCompress(raw, level, out);
}

Status Compressor::decompress(ByteSpan stored, size_t raw_bytes, std::string& out) const {
  if (raw_bytes > kMaxRawColumnBytes) {
    return Error(std::string(name()) + ": column claims " + std::to_string(raw_bytes) +
                 " raw bytes, more than the limit of " + std::to_string(kMaxRawColumnBytes));
  }
  Status plausible = checkClaim(stored, raw_bytes);
  if (!plausible) return plausible.error().context(std::string(name()));
  out.resize(raw_bytes);
  return decompress(stored, std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), out.size()));
}

Status Compressor::decompress(ByteSpan stored, std::span<uint8_t> out) const {
  if (out.size() > kMaxRawColumnBytes) {
    return Error(std::string(name()) + ": column claims " + std::to_string(out.size()) +
                 " raw bytes, more than the limit of " + std::to_string(kMaxRawColumnBytes));
  }
  Status plausible = checkClaim(stored, out.size());
  if (!plausible) return plausible.error().context(std::string(name()));
  Result<size_t> produced = doDecompress(stored, out);
  if (!produced) return produced.error().context(std::string(name()));
  if (*produced != out.size()) {
    return Error(std::string(name()) + ": decompressed to " + std::to_string(*produced) +
                 " bytes, expected " + std::to_string(out.size()));
  }
  return Status::ok();
}

Status Registry::add(std::unique_ptr<ValueCodec> codec) {
  if (encoding(codec->id()) != nullptr) {
    return Error("codec id " + std::to_string(static_cast<int>(codec->id())) + " (" +
                 std::string(codec->name()) + ") is registered twice");
  }
  codecs_.push_back(std::move(codec));
  return Status::ok();
}

Status Registry::add(std::unique_ptr<Compressor> compressor) {
  if (compression(compressor->id()) != nullptr) {
    return Error("compression id " + std::to_string(static_cast<int>(compressor->id())) + " (" +
                 std::string(compressor->name()) + ") is registered twice");
  }
  compressors_.push_back(std::move(compressor));
  return Status::ok();
}

const ValueCodec* Registry::encoding(Encoding id) const {
  for (const auto& c : codecs_) {
    if (c->id() == id) return c.get();
  }
  return nullptr;
}

const Compressor* Registry::compression(Compression id) const {
  for (const auto& c : compressors_) {
    if (c->id() == id) return c.get();
  }
  return nullptr;
}

}  // namespace incise::format::codecs
