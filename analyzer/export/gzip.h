// gzip (RFC 1952) in memory through zlib, for pprof files, which are
// gzipped protobuf.
//
//   Result<std::string> packed = gzipCompress(profile.SerializeAsString());
//   Result<std::string> back = gzipDecompress(*packed);   // also accepts zlib and raw-less input
#pragma once

#include <string>

#include "base/status.h"

namespace incise::analyzer {

Result<std::string> gzipCompress(const std::string& bytes);
// Bounded: fails rather than inflate past `max_bytes`.
Result<std::string> gzipDecompress(const std::string& bytes, size_t max_bytes = size_t{1} << 31);

}  // namespace incise::analyzer
