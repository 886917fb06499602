// --trace BIN:FUNC[+OFFSET] and --trace kernel:FUNC: parsing the option,
// checking the binary and the symbol, and working out where the probes go.
//
//   Result<FunctionProbeSpec> spec = parseFunctionProbe("./app:parse+4");
//   Result<ResolvedFunctionProbe> probe = resolveFunctionProbe(*spec, 1);
//   // probe->start_offset: file offset of the start uprobe
//   // probe->use_uretprobe, or a uprobe at each of probe->return_offsets
//
// Symbols are matched by their ELF name (.symtab, else .dynsym): C++ names
// mangled, Go names as Go writes them (`main.(*Server).handle`). A binary
// that defines runtime.buildVersion is a Go program: its functions end at their
// RET instructions. C and C++ functions probed at their first byte get a
// uretprobe (it also sees tail calls); probed at an offset, their RETs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace incise::recorder {

struct FunctionProbeSpec {
  std::string text;    // as given
  std::string binary;  // "kernel" for kernel functions
  std::string symbol;
  uint64_t offset = 0;
  bool kernel() const { return binary == "kernel"; }
};

struct ResolvedFunctionProbe {
  FunctionProbeSpec spec;
  uint32_t id = 0;  // the latency rows' probe value
  bool go = false;
  uint64_t function_offset = 0;  // file offset of the function's first byte
  uint64_t start_offset = 0;     // file offset of the start probe
  uint64_t sp_delta = 0;         // bytes pushed by the function before start_offset
  bool use_uretprobe = false;
  std::vector<uint64_t> return_offsets;  // file offsets of its RET instructions
};

// "BIN:FUNC", "BIN:FUNC+OFFSET" (decimal or 0x hex), "kernel:FUNC". The
// binary is everything before the last ':' that is followed by the symbol,
// so Go symbols with ':' cannot be named; C++ symbols are mangled (no ':').
Result<FunctionProbeSpec> parseFunctionProbe(const std::string& text);

// Errors name the option, the binary and the symbol: "--trace ./app:nosuch:
// no symbol 'nosuch' in ./app".
Result<ResolvedFunctionProbe> resolveFunctionProbe(const FunctionProbeSpec& spec, uint32_t id);

}  // namespace incise::recorder
