// Compression::kZstd: one standard zstd frame per column.
//
// Byte layout: a zstd frame (RFC 8878) with the content size in its header,
// which must equal ColumnRef.rawBytes. The frame is decompressed into a
// buffer of exactly rawBytes, so a lying frame cannot make us write past it.
//
// Worked example: 1,000 bytes of 00 compress to a 17-byte frame
//   28 B5 2F FD ...   (magic FD2FB528 LE, frame header with content size 1000,
//                      one RLE block of 00 x 1000, no checksum)
//
// Contexts are per thread and reused: creating one costs more than
// compressing a small column.
#include <zstd.h>

#include <memory>

#include "format/codecs/codec.h"

namespace incise::format::codecs {
namespace {

struct CctxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DctxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

class ZstdCompression final : public Compressor {
 public:
  Compression id() const override { return Compression::kZstd; }
  std::string_view name() const override { return "zstd"; }

 private:
  Status doCompress(ByteSpan raw, int level, std::string& out) const override {
    // One context for small inputs and one for large: a context sizes its
    // tables for its input and frees them after ~128 much smaller ones, so
    // one context taking a merged chunk's columns between many small ones
    // allocated and faulted in a megabyte and more at every merge.
    constexpr size_t kLargeInput = 64u << 10;
    thread_local std::unique_ptr<ZSTD_CCtx, CctxDeleter> small(ZSTD_createCCtx());
    thread_local std::unique_ptr<ZSTD_CCtx, CctxDeleter> large(ZSTD_createCCtx());
    ZSTD_CCtx* cctx = raw.size() >= kLargeInput ? large.get() : small.get();
    if (cctx == nullptr) return Error("cannot create a zstd context");
    out.resize(ZSTD_compressBound(raw.size()));
    size_t n = ZSTD_compressCCtx(cctx, out.data(), out.size(), raw.data(), raw.size(), level);
    if (ZSTD_isError(n)) return Error(std::string("compress: ") + ZSTD_getErrorName(n));
    out.resize(n);
    return Status::ok();
  }

  // The layout requires the content size in the frame header; a frame
  // without one, or with another, is refused before anything is allocated.
  Status checkClaim(ByteSpan stored, size_t raw_bytes) const override {
    unsigned long long content = ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (content == ZSTD_CONTENTSIZE_ERROR) return Error("not a zstd frame");
    if (content == ZSTD_CONTENTSIZE_UNKNOWN) return Error("frame header has no content size");
    if (content != raw_bytes) {
      return Error("frame holds " + std::to_string(content) + " bytes, column says " +
                   std::to_string(raw_bytes));
    }
    return Status::ok();
  }

  Result<size_t> doDecompress(ByteSpan stored, std::span<uint8_t> out) const override {
    unsigned long long content = ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (content == ZSTD_CONTENTSIZE_ERROR) return Error("not a zstd frame");
    if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != out.size()) {
      return Error("frame holds " + std::to_string(content) + " bytes, column says " +
                   std::to_string(out.size()));
    }
    thread_local std::unique_ptr<ZSTD_DCtx, DctxDeleter> dctx(ZSTD_createDCtx());
    if (!dctx) return Error("cannot create a zstd context");
    size_t n =
        ZSTD_decompressDCtx(dctx.get(), out.data(), out.size(), stored.data(), stored.size());
    if (ZSTD_isError(n)) return Error(std::string("decompress: ") + ZSTD_getErrorName(n));
    return n;
  }
};

}  // namespace

void registerZstdCompression(Registry& registry) {
  Status s = registry.add(std::make_unique<ZstdCompression>());
  assert(s.isOk());
  (void)s;
}

}  // namespace incise::format::codecs
