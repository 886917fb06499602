// The x86-64 syscall numbers by name, for --syscalls and for naming the
// numbers latency rows carry. The table is generated at build time from the
// kernel's UAPI header (asm/unistd_64.h), so it matches the ABI the recorder
// was built for; numbers are ABI and never change.
//
//   Result<std::vector<uint32_t>> numbers = syscallNumbers("read,nanosleep");  // {0, 35}
//   syscallName(35);                                                           // "nanosleep"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace incise::recorder {

struct SyscallEntry {
  std::string_view name;
  uint32_t number;
};

// Every syscall this build knows, by number.
const std::vector<SyscallEntry>& syscallTable();
// "" for a number not in the table.
std::string_view syscallName(uint32_t number);

// Syscalls that never return to their caller: sys_exit never follows, so
// their latency cannot be timed (exit, exit_group).
bool syscallNeverReturns(uint32_t number);

// "all", or names separated by commas ("read,write,futex"). Unknown names,
// repeats of nothing and the ones that never return are errors that name
// them; "all" leaves out the ones that never return.
Result<std::vector<uint32_t>> syscallNumbers(std::string_view list);

}  // namespace incise::recorder
