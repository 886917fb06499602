// objfile::readUnwindTables on files the toolchain really produces: the CFI
// sections must be found with the addresses and sizes readelf reports, a
// program built without unwind tables but with -g has .debug_frame, and
// files that are not ELF (or are damaged) are Errors, never crashes.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <random>
#include <sstream>

#include "objfile/unwind_tables.h"
#include "tests/objfile/elf_test_files.h"

namespace incise::objfile {
namespace {

using incise::testing::compileC;
using incise::testing::kThreeFunctionsSource;
using incise::testing::readFile;
using incise::testing::TempDir;
using incise::testing::writeFile;

struct SectionFacts {
  uint64_t address = 0;
  uint64_t size = 0;
  bool found = false;
};

// `readelf -SW` as an independent opinion on where a section is.
SectionFacts readelfSection(const std::string& path, const std::string& name) {
  SectionFacts facts;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("readelf -SW " + path).c_str(), "r"), pclose);
  if (!pipe) return facts;
  char line[512];
  while (fgets(line, sizeof line, pipe.get()) != nullptr) {
    std::string text(line);
    size_t bracket = text.find(']');
    if (bracket == std::string::npos) continue;
    std::istringstream fields(text.substr(bracket + 1));
    std::string section, type, address, offset, size;
    fields >> section >> type >> address >> offset >> size;
    if (section != name) continue;
    facts.address = std::stoull(address, nullptr, 16);
    facts.size = std::stoull(size, nullptr, 16);
    facts.found = true;
  }
  return facts;
}

TEST(UnwindTables, FindsEhFrameWhereReadelfSaysItIs) {
  TempDir dir;
  std::string exe = compileC(dir, "tables", kThreeFunctionsSource, "-fasynchronous-unwind-tables");
  Result<UnwindTables> tables = readUnwindTables(exe);
  ASSERT_TRUE(tables) << tables.error().message();
  for (auto [name, section] : {std::pair{".eh_frame", &tables->eh_frame},
                               std::pair{".eh_frame_hdr", &tables->eh_frame_hdr}}) {
    SectionFacts facts = readelfSection(exe, name);
    ASSERT_TRUE(facts.found) << name;
    EXPECT_EQ(section->vaddr, facts.address) << name;
    EXPECT_EQ(section->bytes.size(), facts.size) << name;
  }
  // .eh_frame_hdr starts with version 1 and names where .eh_frame is.
  ASSERT_GE(tables->eh_frame_hdr.bytes.size(), 4u);
  EXPECT_EQ(tables->eh_frame_hdr.bytes[0], 1);

  format::ObjectSymbols object;
  embedUnwindTables(*tables, object);
  EXPECT_EQ(object.eh_frame, tables->eh_frame.bytes);
  EXPECT_EQ(object.eh_frame_vaddr, tables->eh_frame.vaddr);
  EXPECT_EQ(object.eh_frame_hdr, tables->eh_frame_hdr.bytes);
  EXPECT_EQ(object.eh_frame_hdr_vaddr, tables->eh_frame_hdr.vaddr);
}

TEST(UnwindTables, DebugFrameOfAProgramBuiltWithoutUnwindTables) {
  TempDir dir;
  std::string exe = compileC(dir, "debug_frame", kThreeFunctionsSource,
                             "-fno-asynchronous-unwind-tables -fno-unwind-tables");
  SectionFacts facts = readelfSection(exe, ".debug_frame");
  ASSERT_TRUE(facts.found) << "the toolchain emitted no .debug_frame";
  Result<UnwindTables> tables = readUnwindTables(exe);
  ASSERT_TRUE(tables) << tables.error().message();
  EXPECT_EQ(tables->debug_frame.bytes.size(), facts.size);
  EXPECT_EQ(tables->debug_frame.vaddr, 0u);
}

TEST(UnwindTables, ImageAndFileAgree) {
  TempDir dir;
  std::string exe = compileC(dir, "image", kThreeFunctionsSource, "");
  Result<UnwindTables> from_file = readUnwindTables(exe);
  Result<UnwindTables> from_image = readUnwindTablesFromImage(readFile(exe), exe);
  ASSERT_TRUE(from_file && from_image);
  EXPECT_FALSE(from_file->empty());
  EXPECT_EQ(from_file->eh_frame.bytes, from_image->eh_frame.bytes);
  EXPECT_EQ(from_file->eh_frame_hdr.vaddr, from_image->eh_frame_hdr.vaddr);
}

TEST(UnwindTables, NonElfAndDamagedFilesAreErrors) {
  TempDir dir;
  std::string text = dir.file("text");
  writeFile(text, "not an ELF file at all");
  Result<UnwindTables> tables = readUnwindTables(text);
  ASSERT_FALSE(tables);
  EXPECT_NE(tables.error().message().find("not an ELF file"), std::string::npos);
  EXPECT_FALSE(readUnwindTables(dir.file("missing")));

  // Bit flips and truncations of a real binary: an Error or some tables, never a crash.
  std::string exe = compileC(dir, "fuzzed", kThreeFunctionsSource, "");
  std::string image = readFile(exe);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 300; ++i) {
    std::string damaged = image.substr(0, rng() % (image.size() + 1));
    for (int flips = 0; flips < 8 && !damaged.empty(); ++flips)
      damaged[rng() % damaged.size()] ^= static_cast<char>(1u << (rng() % 8));
    (void)readUnwindTablesFromImage(damaged, "damaged");
  }
}

}  // namespace
}  // namespace incise::objfile
