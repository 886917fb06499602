// How many entries an ELF file's function symbol table has (.symtab, else
// .dynsym), and which of the two it is, read from the section headers only:
// the recorder decides from it whether to embed an object's whole table or
// only the symbols its samples hit, without parsing a 100k-symbol table
// (libLLVM, libclang-cpp) first.
//
//   Result<ElfSymbolCount> count = countElfSymbols("/usr/lib/x86_64-linux-gnu/libc.so.6");
//   if (count && !count->full) look for the debug file;  // a stripped library: .dynsym only
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace incise::recorder {

struct ElfSymbolCount {
  size_t symbols = 0;
  bool full = false;  // the count is of .symtab (every function), not of .dynsym
};

Result<ElfSymbolCount> countElfSymbols(const std::string& path);

}  // namespace incise::recorder
