// The one list of fuzz entries: a new target is one line here, one
// add_fuzz_target() line in CMakeLists.txt and a seed folder in corpus/.
#include <array>

#include "fuzz/fuzz_entries.h"

namespace incise::fuzz {
namespace {

// One entry a line:
// clang-format off
constexpr std::array kEntries = {
    FuzzEntry{"trace_reader", fuzzTraceReader},
    FuzzEntry{"perf_map", fuzzPerfMap},
    FuzzEntry{"kallsyms", fuzzKallsyms},
    FuzzEntry{"elf_image", fuzzElfImage},
    FuzzEntry{"eh_frame", fuzzEhFrame},
    FuzzEntry{"cli_parsers", fuzzCliParsers},
};
// clang-format on

}  // namespace

std::span<const FuzzEntry> fuzzEntries() {
  return kEntries;
}

const FuzzEntry* findEntry(std::string_view name) {
  for (const FuzzEntry& entry : kEntries) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace incise::fuzz
