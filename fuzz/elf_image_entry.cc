// Fuzz entry for objfile::readElfImage: symbols, segments, build-id and
// debuglink from an ELF image in memory.
#include <string_view>

#include "fuzz/fuzz_entries.h"
#include "objfile/elf_reader.h"

namespace incise::fuzz {

int fuzzElfImage(const uint8_t* data, size_t size) {
  Result<format::ObjectSymbols> object = objfile::readElfImage(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz-input");
  if (!object) return 0;
  volatile size_t sink = object->build_id.size() + object->debug_link.size();
  for (const auto& symbol : object->symbols) sink = sink + symbol.name.size();
  for (const auto& segment : object->segments) sink = sink + segment.file_size;
  (void)sink;
  return 0;
}

}  // namespace incise::fuzz
