// Reads what incise needs from one ELF file: function and object symbols,
// loadable segments, the ELF type, the GNU build-id and the .gnu_debuglink
// name. Shared by the recorder (which embeds the result in the trace) and the
// analyzer (which reads local debug files), so both agree byte for byte.
//
// Every file is distrusted: libelf does the bounds checks on headers and
// section data, and this reader checks the rest (string indices, note and
// debuglink sizes). A bad file is an Error, never a crash.
//
//   incise::Result<format::ObjectSymbols> object = objfile::readElfObject("/usr/lib/libc.so.6");
//   if (!object) return object.error();  // "/tmp/x: not an ELF file"
//   std::string id = hexBytes(object->build_id);  // "a1b2c3..." (base/hex.h)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/hex.h"
#include "base/status.h"
#include "format/metadata.h"

namespace incise::objfile {

// Which table an object's symbols came from: .symtab names every function
// (static ones too), .dynsym only the exported ones.
enum class SymbolTableKind : uint8_t { kNone, kDynamic, kFull };

struct ElfObject {
  format::ObjectSymbols object;
  SymbolTableKind table = SymbolTableKind::kNone;
};

// Symbols come from .symtab, or .dynsym when the file has no .symtab
// (stripped). Only defined STT_FUNC, STT_GNU_IFUNC and STT_OBJECT symbols are
// kept; size-0 functions are kept too (hand-written assembly has them).
// `path` is recorded as given. eh_frame fields are left empty.
Result<ElfObject> readElf(const std::string& path);
Result<format::ObjectSymbols> readElfObject(const std::string& path);

// Same, from an ELF image already in memory (fuzzing, tests, files read by
// another layer). `path` only names the object in errors and in the result.
Result<format::ObjectSymbols> readElfImage(std::string_view image, const std::string& path);

// What names an object's separate debug file: its build-id (raw bytes) and
// .gnu_debuglink name, either possibly empty; symbols are not read.
struct ElfIdentity {
  std::string build_id;
  std::string debug_link;
};
Result<ElfIdentity> readElfIdentity(const std::string& path);

// The raw bytes of the NT_GNU_BUILD_ID note; an Error if the file has none.
Result<std::string> readBuildId(const std::string& path);

}  // namespace incise::objfile
