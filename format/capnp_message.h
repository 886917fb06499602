// Cap'n Proto messages inside block payloads: flattening a builder to bytes,
// and reading bytes from disk with traversal and nesting limits, turning any
// kj::Exception (a malformed message) into an Error.
//
//   capnp::MallocMessageBuilder message;
//   fill(message.initRoot<schema::Footer>());
//   std::string bytes = flattenMessage(message);
//   ...
//   Result<uint64_t> end = readMessage(bytes, options, [](capnp::MessageReader& m) {
//     return m.getRoot<schema::Footer>().getEndMonoNs();
//   });
//
// From format 2.0 chunk headers and the footer are stored packed (Cap'n
// Proto's packing: zero bytes of a word dropped behind a tag byte), about
// half the size: packMessage() writes that form, unpackWords() turns it back
// into the flat words readMessage() takes, bounded by `max_bytes`.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize-packed.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "base/status.h"
#include "format/codecs/codec.h"
#include "format/reader.h"

namespace incise::format {

inline std::string flattenMessage(capnp::MessageBuilder& message) {
  kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

inline std::string packedMessage(capnp::MessageBuilder& message) {
  kj::VectorOutputStream stream;
  capnp::writePackedMessage(stream, message);
  auto bytes = stream.getArray();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

// The flat words of a packed message; an Error when the packing runs past
// the end of `packed` or would unpack to more than `max_bytes`.
Result<std::string> unpackWords(codecs::ByteSpan packed, size_t max_bytes);  // packed_words.cc

template <typename Fn>
auto readMessage(codecs::ByteSpan bytes, const ReaderOptions& options, Fn&& fn)
    -> Result<std::invoke_result_t<Fn, capnp::MessageReader&>> {
  if (bytes.size() % sizeof(capnp::word) != 0 || bytes.empty()) {
    return Error("Cap'n Proto message of " + std::to_string(bytes.size()) +
                 " bytes is not a whole number of words");
  }
  // Copy into word-aligned memory: the payload sits at any offset in our buffer.
  kj::Array<capnp::word> words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), bytes.data(), bytes.size());
  capnp::ReaderOptions limits;
  // A message of N words is read in about N words; more means the same
  // bytes are read again and again (overlapping pointers, lists of empty
  // structs) and would let a tiny block expand into gigabytes of vectors.
  uint64_t amplification_bound = 4 * uint64_t{words.size()} + 64;
  limits.traversalLimitInWords = std::min(options.traversal_limit_words, amplification_bound);
  limits.nestingLimit = options.nesting_limit;
  try {
    capnp::FlatArrayMessageReader reader(words.asPtr(), limits);
    return fn(static_cast<capnp::MessageReader&>(reader));
  } catch (const kj::Exception& e) {
    return Error(std::string("malformed Cap'n Proto message: ") + e.getDescription().cStr());
  }
}

}  // namespace incise::format
