// Symbol lists as one column-wise blob (format 2.0): kernel symbols and an
// object's ELF symbols, in MetadataDelta.kernelSymbolTable and
// ObjectSymbols.symbolTable instead of Cap'n Proto lists.
//
// A list of structs costs a struct and a text pointer per symbol, and its
// addresses sit between names, so zstd sees neither column whole. Here:
//
//   varint n
//   n x varint(zigzag(address[i] - address[i-1]))     address[-1] = 0
//   n x varint(size)                                   object symbols only
//   n x (varint length, bytes) of the name
//   n x (varint length, bytes) of the module           kernel symbols only
//
// Addresses come in the writer's order (any order round-trips; sorted ones
// make small differences). On the lock_story trace's 322 kernel symbols:
// 5.1 KB at zstd 19 as a list, 2.9 KB as this blob.
//
//   std::string blob = encodeKernelSymbols(delta.kernel_symbols);
//   Result<std::vector<KernelSymbol>> back = decodeKernelSymbols(codecs::asBytes(blob));
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "format/codecs/codec.h"
#include "format/metadata.h"

namespace incise::format {

std::string encodeKernelSymbols(const std::vector<KernelSymbol>& symbols);
Result<std::vector<KernelSymbol>> decodeKernelSymbols(codecs::ByteSpan blob);

std::string encodeSymbols(const std::vector<Symbol>& symbols);
Result<std::vector<Symbol>> decodeSymbols(codecs::ByteSpan blob);

}  // namespace incise::format
