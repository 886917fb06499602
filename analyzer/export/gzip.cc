#include "analyzer/export/gzip.h"

#include <zlib.h>

namespace incise::analyzer {
namespace {

constexpr int kGzipWindowBits = 15 + 16;  // 2^15 window, gzip wrapper
constexpr int kAutoWindowBits = 15 + 32;  // gzip or zlib wrapper, detected
constexpr size_t kStep = 1 << 16;

std::string zlibMessage(const char* what, int code, const z_stream& stream) {
  return std::string(what) + " failed (" + std::to_string(code) +
         (stream.msg ? std::string(": ") + stream.msg : std::string()) + ")";
}

}  // namespace

Result<std::string> gzipCompress(const std::string& bytes) {
  z_stream stream{};
  int code = deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindowBits, 8,
                          Z_DEFAULT_STRATEGY);
  if (code != Z_OK) return Error(zlibMessage("gzip: deflateInit2", code, stream));
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  code = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (code != Z_STREAM_END) return Error(zlibMessage("gzip: deflate", code, stream));
  return out;
}

Result<std::string> gzipDecompress(const std::string& bytes, size_t max_bytes) {
  z_stream stream{};
  int code = inflateInit2(&stream, kAutoWindowBits);
  if (code != Z_OK) return Error(zlibMessage("gunzip: inflateInit2", code, stream));
  std::string out;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  do {
    if (out.size() >= max_bytes) {
      inflateEnd(&stream);
      return Error("gunzip: output larger than " + std::to_string(max_bytes) + " bytes");
    }
    size_t used = out.size();
    out.resize(used + kStep);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    stream.avail_out = kStep;
    code = inflate(&stream, Z_NO_FLUSH);
    out.resize(used + kStep - stream.avail_out);
    if (code != Z_OK && code != Z_STREAM_END) {
      std::string message = zlibMessage("gunzip: inflate", code, stream);
      inflateEnd(&stream);
      return Error(message);
    }
    if (code == Z_OK && stream.avail_in == 0 && stream.avail_out != 0) {
      inflateEnd(&stream);
      return Error("gunzip: input ends before the end of the stream");
    }
  } while (code != Z_STREAM_END);
  inflateEnd(&stream);
  return out;
}

}  // namespace incise::analyzer
