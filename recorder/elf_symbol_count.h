// How many entries an ELF file's function symbol table has (.symtab, else
// .dynsym), read from the section headers only: the recorder decides from it
// whether to embed an object's whole table or only the symbols its samples
// hit, without parsing a 100k-symbol table (libLLVM, libclang-cpp) first.
//
//   Result<size_t> count = countElfSymbols("/usr/lib/x86_64-linux-gnu/libc.so.6");
//   if (count && *count > kFullSymbolTableLimit) ...
#pragma once

#include <cstddef>
#include <string>

#include "format/status.h"

namespace incise::recorder {

Result<size_t> countElfSymbols(const std::string& path);

}  // namespace incise::recorder
