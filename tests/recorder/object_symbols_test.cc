// What the recorder embeds for a hit object, on ELF files built at test
// time: the richest table on the recording host (a debug file by build-id
// or .gnu_debuglink inside the process's root, when the object is
// stripped), and the hit subset with FDE ranges for hits nothing names.
#include "recorder/metadata/object_symbols.h"
#include "base/hex.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "objfile/elf_reader.h"
#include "objfile/fde_ranges.h"
#include "objfile/unwind_tables.h"
#include "tests/objfile/elf_test_files.h"

namespace incise::recorder {
namespace {

using incise::testing::compileC;
using incise::testing::kThreeFunctionsSource;
using incise::testing::nmAddress;
using incise::testing::run;
using incise::testing::TempDir;

std::string withHiddenHelper() {
  return std::string(kThreeFunctionsSource) +
         "__attribute__((noinline)) static int hidden_helper(int x) {"
         " return x * 7 + incise_alpha(x); }\n"
         "int (*volatile keep_hidden)(int) = hidden_helper;\n";
}

bool names(const format::ObjectSymbols& object, const std::string& name) {
  return std::any_of(object.symbols.begin(), object.symbols.end(),
                     [&](const format::Symbol& symbol) { return symbol.name == name; });
}

// A stripped library inside a fake process root (ROOT/usr/lib/libwork.so),
// with its debug file kept aside; the hit as the tracker would make it.
struct StrippedLibrary {
  TempDir dir;
  std::string root = dir.file("root");
  std::string installed = root + "/usr/lib/libwork.so";
  std::string debug = dir.file("libwork.debug");
  uint64_t hidden = 0;
  uint64_t alpha = 0;
  HitObject hit{.path = "/usr/lib/libwork.so", .open_path = root + "/usr/lib/libwork.so"};

  StrippedLibrary() {
    const std::string built = compileC(dir, "libwork.so", withHiddenHelper(), "-shared -fPIC");
    hidden = nmAddress(built, "hidden_helper");
    alpha = nmAddress(built, "incise_alpha");
    std::filesystem::create_directories(root + "/usr/lib");
    std::filesystem::copy_file(built, installed);
    run("objcopy --only-keep-debug " + installed + " " + debug);
    run("strip --strip-all " + installed);
  }
  // ROOT/usr/lib/debug/.build-id/xx/rest.debug, named from the debug file.
  void installByBuildId() const {
    Result<std::string> id = objfile::readBuildId(debug);
    ASSERT_TRUE(id) << id.error().message();
    const std::string hex = hexBytes(*id);
    const std::string path =
        root + "/usr/lib/debug/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::filesystem::copy_file(debug, path);
  }
  uint64_t fileOffsetOf(const format::ObjectSymbols& object, uint64_t vaddr) const {
    for (const format::Segment& segment : object.segments) {
      if (vaddr >= segment.vaddr && vaddr - segment.vaddr < segment.file_size)
        return vaddr - segment.vaddr + segment.file_offset;
    }
    return vaddr;
  }
};

TEST(ObjectSymbols, AStrippedObjectsDebugFileByBuildIdInItsRoot) {
  StrippedLibrary library;
  ASSERT_NE(library.hidden, 0u);
  Result<format::ObjectSymbols> before = readObjectSymbols(library.hit);
  ASSERT_TRUE(before) << before.error().message();
  EXPECT_FALSE(names(*before, "hidden_helper"));
  EXPECT_TRUE(names(*before, "incise_alpha"));  // .dynsym
  EXPECT_FALSE(findDebugFile(library.hit));
  EXPECT_TRUE(embedsHitSubset(library.hit, 1000)) << "a stripped .dynsym embeds its hits";

  library.installByBuildId();
  ASSERT_TRUE(findDebugFile(library.hit));
  Result<format::ObjectSymbols> object = readObjectSymbols(library.hit);
  ASSERT_TRUE(object) << object.error().message();
  EXPECT_TRUE(names(*object, "hidden_helper"));
  EXPECT_TRUE(names(*object, "incise_alpha"));
  EXPECT_EQ(object->path, "/usr/lib/libwork.so");
  EXPECT_EQ(object->segments.size(), before->segments.size());  // the object's own
  EXPECT_FALSE(embedsHitSubset(library.hit, 1000));             // a small full table
  EXPECT_TRUE(embedsHitSubset(library.hit, 2));
}

TEST(ObjectSymbols, ADebugLinkNextToTheObjectWhenItsBuildIdMatches) {
  StrippedLibrary library;
  const std::string linked = library.root + "/usr/lib/.debug/libwork.dbg";
  std::filesystem::create_directories(std::filesystem::path(linked).parent_path());
  std::filesystem::copy_file(library.debug, linked);
  ASSERT_TRUE(run("cd " + library.root +
                  "/usr/lib/.debug && objcopy --add-gnu-debuglink=libwork.dbg " +
                  library.installed));
  Result<format::ObjectSymbols> object = readObjectSymbols(library.hit);
  ASSERT_TRUE(object) << object.error().message();
  EXPECT_EQ(object->debug_link, "libwork.dbg");
  EXPECT_TRUE(names(*object, "hidden_helper"));

  // The same name holding another build's debug file is not taken.
  TempDir other;
  const std::string stranger =
      compileC(other, "libother.so", withHiddenHelper() + "int other_build;\n", "-shared -fPIC");
  std::filesystem::remove(linked);
  ASSERT_TRUE(run("objcopy --only-keep-debug " + stranger + " " + linked));
  Result<format::ObjectSymbols> refused = readObjectSymbols(library.hit);
  ASSERT_TRUE(refused) << refused.error().message();
  EXPECT_FALSE(names(*refused, "hidden_helper"));
}

TEST(ObjectSymbols, TheHitSubsetAddsTheFdeRangeOfAHitNothingNames) {
  StrippedLibrary library;
  Result<format::ObjectSymbols> object = readObjectSymbols(library.hit);
  ASSERT_TRUE(object) << object.error().message();
  const std::vector<uint64_t> offsets = {library.fileOffsetOf(*object, library.hidden + 1),
                                         library.fileOffsetOf(*object, library.hidden + 3),
                                         library.fileOffsetOf(*object, library.alpha + 1)};
  const size_t total = object->symbols.size();
  EXPECT_EQ(keepHitSymbols(library.hit, *object, offsets), total);

  Result<objfile::UnwindTables> tables = objfile::readUnwindTables(library.installed);
  ASSERT_TRUE(tables);
  const objfile::FunctionRange* fde = objfile::findFunctionRange(
      objfile::readFdeRanges(tables->eh_frame.bytes, tables->eh_frame.vaddr), library.hidden);
  ASSERT_NE(fde, nullptr);
  std::vector<format::Symbol> expected = {{library.alpha, 0, "incise_alpha"},
                                          {fde->start, fde->end - fde->start, ""}};
  std::sort(expected.begin(), expected.end(),
            [](const auto& a, const auto& b) { return a.address < b.address; });
  ASSERT_EQ(object->symbols.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(object->symbols[i].address, expected[i].address);
    EXPECT_EQ(object->symbols[i].name, expected[i].name);
    if (expected[i].name.empty()) {
      EXPECT_EQ(object->symbols[i].size, expected[i].size);
    }
  }
}

}  // namespace
}  // namespace incise::recorder
