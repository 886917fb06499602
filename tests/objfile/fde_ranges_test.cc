// FDE ranges read from the .eh_frame of objects compiled at test time: every
// function's range is exactly the [address, address + size) nm gives it.
#include "objfile/fde_ranges.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>

#include "objfile/unwind_tables.h"
#include "tests/objfile/elf_test_files.h"

namespace incise::objfile {
namespace {

using incise::testing::compileC;
using incise::testing::kThreeFunctionsSource;
using incise::testing::TempDir;

// nm -S: address and size of `symbol`; {0, 0} when nm does not list it.
FunctionRange nmRange(const std::string& path, const std::string& symbol) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("nm -S -P " + path).c_str(), "r"), pclose);
  char line[4096];
  while (pipe && fgets(line, sizeof line, pipe.get()) != nullptr) {
    std::istringstream fields(line);
    std::string name, type, address, size;
    fields >> name >> type >> address >> size;
    if (name == symbol && !size.empty()) {
      const uint64_t start = std::stoull(address, nullptr, 16);
      return {start, start + std::stoull(size, nullptr, 16)};
    }
  }
  return {};
}

TEST(FdeRanges, EveryFunctionHasItsOwnRange) {
  TempDir dir;
  for (const std::string flags : {"-fPIE -pie", "-shared -fPIC", "-static -no-pie"}) {
    SCOPED_TRACE(flags);
    const std::string object =
        compileC(dir, "obj" + std::to_string(flags.size()), kThreeFunctionsSource, flags);
    Result<UnwindTables> tables = readUnwindTables(object);
    ASSERT_TRUE(tables) << tables.error().message();
    const std::vector<FunctionRange> ranges =
        readFdeRanges(tables->eh_frame.bytes, tables->eh_frame.vaddr);
    ASSERT_FALSE(ranges.empty());
    for (const char* function : {"incise_alpha", "incise_beta", "incise_gamma"}) {
      const FunctionRange expected = nmRange(object, function);
      ASSERT_NE(expected.end, 0u) << function;
      const FunctionRange* found = findFunctionRange(ranges, expected.start + 1);
      ASSERT_NE(found, nullptr) << function;
      EXPECT_EQ(*found, expected) << function;
      EXPECT_EQ(findFunctionRange(ranges, expected.end - 1), found);
    }
    EXPECT_TRUE(std::is_sorted(ranges.begin(), ranges.end(),
                               [](const auto& a, const auto& b) { return a.start < b.start; }));
  }
}

TEST(FdeRanges, MalformedBytesEndTheWalkWithoutACrash) {
  TempDir dir;
  const std::string object = compileC(dir, "app", kThreeFunctionsSource, "-fPIE -pie");
  Result<UnwindTables> tables = readUnwindTables(object);
  ASSERT_TRUE(tables) << tables.error().message();
  const std::string& bytes = tables->eh_frame.bytes;
  const size_t whole = readFdeRanges(bytes, tables->eh_frame.vaddr).size();
  // Every truncation, and a length field pointing far past the end.
  for (size_t size = 0; size < bytes.size(); size += 7) {
    EXPECT_LE(readFdeRanges(std::string_view(bytes).substr(0, size), 0).size(), whole);
  }
  std::string broken = bytes;
  broken[0] = '\xf0';
  broken[1] = broken[2] = '\xff';
  broken[3] = '\x7f';
  EXPECT_TRUE(readFdeRanges(broken, 0).empty());
  EXPECT_TRUE(readFdeRanges("", 0).empty());
  EXPECT_EQ(findFunctionRange({}, 5), nullptr);
}

}  // namespace
}  // namespace incise::objfile
