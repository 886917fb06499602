#include "objfile/elf_reader.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "base/hex.h"
#include "tests/objfile/elf_test_files.h"

namespace incise::objfile {
namespace {

using testing::compileC;
using testing::kThreeFunctionsSource;
using testing::nmAddress;
using testing::TempDir;

const format::Symbol* findSymbol(const format::ObjectSymbols& object, const std::string& name) {
  auto it = std::find_if(object.symbols.begin(), object.symbols.end(),
                         [&](const format::Symbol& s) { return s.name == name; });
  return it == object.symbols.end() ? nullptr : &*it;
}

TEST(ElfReader, PieSymbolsMatchNmAndSegmentsAreLoaded) {
  TempDir dir;
  const std::string pie = compileC(dir, "pie", kThreeFunctionsSource, "-fPIE -pie");
  Result<format::ObjectSymbols> object = readElfObject(pie);
  ASSERT_TRUE(object) << object.error().message();
  EXPECT_EQ(object->elf_type, ET_DYN);
  EXPECT_EQ(object->path, pie);
  for (const char* name : {"incise_alpha", "incise_beta", "incise_gamma", "main"}) {
    const format::Symbol* symbol = findSymbol(*object, name);
    ASSERT_NE(symbol, nullptr) << name;
    EXPECT_EQ(symbol->address, nmAddress(pie, name)) << name;
    EXPECT_GT(symbol->size, 0u) << name;
  }
  EXPECT_TRUE(std::is_sorted(object->symbols.begin(), object->symbols.end(),
                             [](auto& a, auto& b) { return a.address < b.address; }));
  const bool has_executable_segment =
      std::any_of(object->segments.begin(), object->segments.end(),
                  [](const format::Segment& s) { return (s.flags & PF_X) != 0; });
  EXPECT_TRUE(has_executable_segment);
  EXPECT_EQ(object->build_id.size(), 20u);  // --build-id=sha1
}

TEST(ElfReader, StaticExecutableIsEtExec) {
  TempDir dir;
  const std::string exe = compileC(dir, "static", kThreeFunctionsSource, "-static -no-pie");
  Result<format::ObjectSymbols> object = readElfObject(exe);
  ASSERT_TRUE(object) << object.error().message();
  EXPECT_EQ(object->elf_type, ET_EXEC);
  const format::Symbol* beta = findSymbol(*object, "incise_beta");
  ASSERT_NE(beta, nullptr);
  EXPECT_EQ(beta->address, nmAddress(exe, "incise_beta"));
  EXPECT_GT(object->symbols.size(), 100u);  // libc is linked in
}

TEST(ElfReader, BuildIdAgreesWithReadBuildIdAndHexRoundTrips) {
  TempDir dir;
  const std::string so = compileC(dir, "lib.so", kThreeFunctionsSource, "-shared -fPIC");
  Result<format::ObjectSymbols> object = readElfObject(so);
  Result<std::string> build_id = readBuildId(so);
  ASSERT_TRUE(object && build_id);
  EXPECT_EQ(*build_id, object->build_id);
  const std::string hex = hexBytes(*build_id);
  EXPECT_EQ(hex.size(), 40u);
  Result<std::string> back = bytesFromHex(hex);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, *build_id);
}

TEST(ElfReader, StrippedFileFallsBackToDynsymAndKeepsDebugLink) {
  TempDir dir;
  const std::string so = compileC(dir, "lib.so", kThreeFunctionsSource, "-shared -fPIC");
  const std::string debug = dir.file("lib.so.debug");
  ASSERT_TRUE(testing::run("objcopy --only-keep-debug " + so + " " + debug));
  ASSERT_TRUE(testing::run("strip --strip-all " + so));
  ASSERT_TRUE(testing::run("objcopy --add-gnu-debuglink=" + debug + " " + so));

  Result<format::ObjectSymbols> stripped = readElfObject(so);
  ASSERT_TRUE(stripped) << stripped.error().message();
  EXPECT_EQ(stripped->debug_link, "lib.so.debug");
  // Exported functions survive in .dynsym; nm no longer sees a .symtab.
  EXPECT_NE(findSymbol(*stripped, "incise_beta"), nullptr);

  Result<format::ObjectSymbols> separate = readElfObject(debug);
  ASSERT_TRUE(separate) << separate.error().message();
  EXPECT_EQ(separate->build_id, stripped->build_id);
  const format::Symbol* beta = findSymbol(*separate, "incise_beta");
  ASSERT_NE(beta, nullptr);
  EXPECT_EQ(beta->address, findSymbol(*stripped, "incise_beta")->address);
  EXPECT_FALSE(separate->segments.empty());
}

TEST(ElfReader, ClearErrorsForMissingAndNonElfFiles) {
  TempDir dir;
  Result<format::ObjectSymbols> missing = readElfObject(dir.file("nope"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("cannot open"), std::string::npos);

  testing::writeFile(dir.file("text"), "just some text, not an object file\n");
  Result<format::ObjectSymbols> text = readElfObject(dir.file("text"));
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message().find("not an ELF file"), std::string::npos);

  Result<std::string> no_id = readBuildId(dir.file("text"));
  EXPECT_FALSE(no_id);
}

// Truncated and bit-flipped copies of a real object must give a value or an
// Error, never a crash (ASan/UBSan watch this in CI).
TEST(ElfReader, SurvivesTruncatedAndCorruptedImages) {
  TempDir dir;
  const std::string so = compileC(dir, "lib.so", kThreeFunctionsSource, "-shared -fPIC");
  const std::string image = testing::readFile(so);
  ASSERT_GT(image.size(), 1000u);
  size_t ok = 0;
  for (size_t length = 0; length < image.size(); length += 97) {
    if (readElfImage(std::string_view(image).substr(0, length), "cut")) ++ok;
  }
  std::mt19937 random(12345);
  for (int round = 0; round < 300; ++round) {
    std::string damaged = image;
    for (int flips = 0; flips < 8; ++flips) {
      damaged[random() % damaged.size()] = static_cast<char>(random());
    }
    if (readElfImage(damaged, "flipped")) ++ok;
  }
  Result<format::ObjectSymbols> intact = readElfImage(image, "intact");
  ASSERT_TRUE(intact) << intact.error().message();
  EXPECT_NE(findSymbol(*intact, "incise_gamma"), nullptr);
  EXPECT_GT(ok, 0u);
}

}  // namespace
}  // namespace incise::objfile
