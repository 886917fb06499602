#include "recorder/probes/syscall_table.h"

#include <algorithm>

namespace incise::recorder {

const std::vector<SyscallEntry>& syscallTable() {
  static const std::vector<SyscallEntry> table = [] {
    std::vector<SyscallEntry> entries = {
#include "syscall_names.inc"
    };
    std::sort(entries.begin(), entries.end(),
              [](const SyscallEntry& a, const SyscallEntry& b) { return a.number < b.number; });
    return entries;
  }();
  return table;
}

std::string_view syscallName(uint32_t number) {
  const auto& table = syscallTable();
  auto it = std::lower_bound(table.begin(), table.end(), number,
                             [](const SyscallEntry& e, uint32_t n) { return e.number < n; });
  return it != table.end() && it->number == number ? it->name : std::string_view();
}

bool syscallNeverReturns(uint32_t number) {
  std::string_view name = syscallName(number);
  return name == "exit" || name == "exit_group";
}

Result<std::vector<uint32_t>> syscallNumbers(std::string_view list) {
  std::vector<uint32_t> numbers;
  if (list == "all") {
    for (const SyscallEntry& e : syscallTable())
      if (!syscallNeverReturns(e.number)) numbers.push_back(e.number);
    return numbers;
  }
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string_view name =
        list.substr(start, comma == std::string_view::npos ? list.npos : comma - start);
    if (name.empty()) return Error("--syscalls " + std::string(list) + ": an empty syscall name");
    const auto& table = syscallTable();
    auto it = std::find_if(table.begin(), table.end(),
                           [&](const SyscallEntry& e) { return e.name == name; });
    if (it == table.end())
      return Error("--syscalls: unknown syscall '" + std::string(name) +
                   "' (names as in man 2 syscalls: read, nanosleep, futex, ...)");
    if (syscallNeverReturns(it->number))
      return Error("--syscalls: " + std::string(name) +
                   " never returns, so its latency cannot be timed");
    if (std::find(numbers.begin(), numbers.end(), it->number) == numbers.end())
      numbers.push_back(it->number);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return numbers;
}

}  // namespace incise::recorder
