// Chunk's byte-blob columns (Encoding::kBytes): per-row slices of one buffer.
#include "format/reader.h"

namespace incise::format {

void Chunk::setBlobs(unsigned column, std::string bytes) {
  if (column >= columns_.size()) return;
  if (blobs_.size() <= column) blobs_.resize(column + 1);
  Blobs& blobs = blobs_[column];
  blobs.bytes = std::move(bytes);
  blobs.offsets.assign(1, 0);
  blobs.offsets.reserve(columns_[column].size() + 1);
  for (uint64_t length : columns_[column]) blobs.offsets.push_back(blobs.offsets.back() + length);
  // The codec checked that the lengths add up; a mismatch means a caller bug.
  if (blobs.offsets.back() != blobs.bytes.size()) blobs = Blobs{};
}

std::span<const uint8_t> Chunk::bytes(unsigned column, size_t row) const {
  if (column >= blobs_.size()) return {};
  const Blobs& blobs = blobs_[column];
  if (row + 1 >= blobs.offsets.size()) return {};
  const auto* data = reinterpret_cast<const uint8_t*>(blobs.bytes.data());
  return std::span<const uint8_t>(data + blobs.offsets[row],
                                  blobs.offsets[row + 1] - blobs.offsets[row]);
}

}  // namespace incise::format
