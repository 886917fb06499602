// Test support for the unwinder: a C program, compiled at test time without
// frame pointers, whose leaf (main -> level_a -> level_b -> leaf) writes its
// registers (ip, sp, bp), a copy of its stack from sp up and /proc/self/maps
// to a file: a real stack with real CFI, unwound offline by the tests.
//
//   StackDump dump = recordStackDump(dir);
//   Unwinder unwinder(dump.metadata);
//   unwinder.unwind(dump.pid, 1, dump.regs, dump.memory());
#pragma once

#include <sys/mman.h>

#include <cstring>
#include <set>
#include <sstream>
#include <string>

#include "analyzer/unwind/stack_memory.h"
#include "analyzer/unwind/unwind_registers.h"
#include "format/metadata.h"
#include "objfile/elf_reader.h"
#include "objfile/unwind_tables.h"
#include "tests/objfile/elf_test_files.h"

namespace incise::analyzer::testing {

inline constexpr char kStackDumpSource[] = R"(
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
volatile int sink;
__attribute__((noinline)) void leaf(const char* out) {
  uint64_t ip, sp, bp;
  __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                   : "=r"(ip), "=r"(sp), "=r"(bp));
  char buffer[4096];
  FILE* maps = fopen("/proc/self/maps", "r");
  size_t maps_size = fread(buffer, 1, sizeof buffer - 1, maps);
  buffer[maps_size] = 0;
  fclose(maps);
  uint64_t stack_end = 0;
  char* line = strstr(buffer, "[stack]");
  while (line && line > buffer && line[-1] != '\n') --line;
  if (line) sscanf(strchr(line, '-') + 1, "%lx", &stack_end);
  uint64_t size = stack_end - sp < 16384 ? stack_end - sp : 16384;
  FILE* f = fopen(out, "wb");
  fwrite(&ip, 8, 1, f); fwrite(&sp, 8, 1, f); fwrite(&bp, 8, 1, f); fwrite(&size, 8, 1, f);
  fwrite((const void*)sp, 1, size, f);
  fwrite(buffer, 1, maps_size, f);
  fclose(f);
  sink++;
}
__attribute__((noinline)) void level_b(const char* out) { leaf(out); sink++; }
__attribute__((noinline)) void level_a(const char* out) { level_b(out); sink++; }
int main(int argc, char** argv) { if (argc > 1) level_a(argv[1]); sink++; return 0; }
)";

struct StackDump {
  std::string exe;
  format::Metadata metadata;
  uint32_t pid = 4242;
  UnwindRegisters regs;
  std::string stack;
  StackMemory memory(size_t bytes = SIZE_MAX) const {
    auto* data = reinterpret_cast<const uint8_t*>(stack.data());
    return StackMemory{.sp = regs.sp,
                       .bytes = std::span<const uint8_t>(data, std::min(bytes, stack.size()))};
  }
};

// Compiles and runs the program; embeds every file-backed executable mapping
// (the program, libc, ld.so) with its symbols and .eh_frame, as the recorder does.
inline StackDump recordStackDump(const incise::testing::TempDir& dir) {
  StackDump dump;
  dump.exe = incise::testing::compileC(dir, "stack_dump", kStackDumpSource,
                                       "-fomit-frame-pointer -fasynchronous-unwind-tables");
  std::string out = dir.file("dump.bin");
  incise::testing::run(dump.exe + " " + out);
  std::string bytes = incise::testing::readFile(out);
  uint64_t header[4] = {};
  if (bytes.size() < sizeof(header)) return dump;
  std::memcpy(header, bytes.data(), sizeof(header));
  dump.regs = UnwindRegisters{.ip = header[0], .sp = header[1], .bp = header[2]};
  if (bytes.size() < sizeof(header) + header[3]) return dump;
  dump.stack = bytes.substr(sizeof(header), header[3]);
  std::istringstream maps(bytes.substr(sizeof(header) + header[3]));
  std::string line;
  std::set<std::string> embedded;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode >> path;
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] != '/') continue;
    format::Mapping mapping{.pid = dump.pid, .path = path, .prot = PROT_READ | PROT_EXEC};
    mapping.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    mapping.end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    mapping.file_offset = std::stoull(offset, nullptr, 16);
    dump.metadata.mappings.push_back(mapping);
    if (!embedded.insert(path).second) continue;
    Result<format::ObjectSymbols> object = objfile::readElfObject(path);
    EXPECT_TRUE(object) << object.error().message();
    if (!object) continue;
    object->build_id.clear();  // matched by path, like the mapping
    Result<objfile::UnwindTables> tables = objfile::readUnwindTables(path);
    EXPECT_TRUE(tables) << tables.error().message();
    if (tables) objfile::embedUnwindTables(tables.take(), *object);
    dump.metadata.objects.push_back(object.take());
  }
  return dump;
}

}  // namespace incise::analyzer::testing
