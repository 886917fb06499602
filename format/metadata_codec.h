// Plain structs (format/metadata.h) <-> their Cap'n Proto form
// (schemas/trace.capnp). The only place that knows both.
//
//   std::string bytes = encodeHeader(header);            // a kHeader payload
//   Result<Header> back = decodeHeader(asBytes(bytes), {});
#pragma once

#include <string>

#include "base/status.h"
#include "format/codecs/codec.h"
#include "format/metadata.h"
#include "format/reader.h"

namespace incise::format {

std::string encodeHeader(const Header& header);
Result<Header> decodeHeader(codecs::ByteSpan bytes, const ReaderOptions& options);

std::string encodeMetadata(const MetadataDelta& delta);
Result<MetadataDelta> decodeMetadata(codecs::ByteSpan bytes, const ReaderOptions& options);

// Appends every list of `delta` to `into` (file order is time order).
void mergeMetadata(Metadata& into, MetadataDelta&& delta);

}  // namespace incise::format
