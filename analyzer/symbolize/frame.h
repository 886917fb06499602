// Frame: what the symbolizer says about one code address, ready to print.
//
// `name` is the text a report shows: the demangled function when one was
// found, else "module+0xoffset", else "[unknown] 0xaddress" — an address is
// never dropped. The other fields let reports group by module or source.
//
//   const Frame& frame = symbolizer.lookup(pid, ip, time);
//   table.row(frame.name, frame.module);              // "std::vector<int>::push_back", "app"
//   if (frame.source == SymbolSource::kUnknown) ...   // counted in symbolizer.counters()
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace incise::analyzer {

// Where a frame's name came from, in the order the symbolizer tries them.
enum class SymbolSource : uint8_t {
  kEmbedded,    // a symbol table carried in the trace
  kLocal,       // a local file: build-id debug file, --symfs, .gnu_debuglink
  kDebuginfod,  // fetched by build-id through libdebuginfod
  kPerfMap,     // a JIT perf map snapshot carried in the trace
  kKernel,      // the kernel symbols carried in the trace
  kUnknown,     // nothing named it
};

std::string_view symbolSourceName(SymbolSource source);

struct Frame {
  std::string name;      // what to print; never empty
  std::string function;  // demangled; empty when unknown
  std::string module;    // basename of the object, "[kernel.kallsyms]", "[ext4]", "perf-PID.map"
  uint64_t module_offset = 0;  // ELF virtual address in the module when its segments are known,
                               // else the offset in the file (or the address itself, unmapped)
  uint64_t symbol_offset = 0;  // address - function start, when `function` is known
  SymbolSource source = SymbolSource::kUnknown;
  bool kernel = false;
  // No executable mapping, JIT map or kernel page holds the address: as a
  // return address it is garbage from a broken walk (see stack_frames.h).
  bool outside_code = false;
  // Kernel code that runs the recorder's BPF programs, not the workload's.
  bool tracing_machinery = false;
  // Dense per Symbolizer (0, 1, ... in the order frames were first made), so
  // callers can keep per-frame data in a vector rather than a map.
  uint32_t id = 0;
  // The object the frame is in, for Symbolizer::sourceLine; kNoObject otherwise.
  static constexpr uint32_t kNoObject = UINT32_MAX;
  uint32_t object = kNoObject;

  bool known() const { return !function.empty(); }
};

}  // namespace incise::analyzer
