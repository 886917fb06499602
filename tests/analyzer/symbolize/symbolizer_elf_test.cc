// The symbolizer against ELF files compiled at test time, mapped at
// realistic bases; expected addresses come from `nm`, not from our reader.
#include <gtest/gtest.h>

#include <filesystem>

#include "analyzer/symbolize/symbolizer.h"
#include "base/hex.h"
#include "objfile/elf_reader.h"
#include "objfile/fde_ranges.h"
#include "objfile/unwind_tables.h"
#include "tests/analyzer/symbolize/loader_mappings.h"
#include "tests/objfile/elf_test_files.h"

namespace incise::analyzer {
namespace {

using incise::testing::compileC;
using incise::testing::kThreeFunctionsSource;
using incise::testing::nmAddress;
using incise::testing::TempDir;
using testing::loaderMappings;

constexpr uint32_t kPid = 4242;
constexpr uint64_t kPieBias = 0x55d4c3a00000;
constexpr uint64_t kLibraryBias = 0x7f3a12000000;

// Hermetic: nothing from this machine's /usr/lib/debug or debuginfod.
SymbolizerOptions isolated() {
  SymbolizerOptions options;
  options.system_debug_dir.clear();
  options.use_debuginfod = false;
  return options;
}

format::ObjectSymbols readOrFail(const std::string& path) {
  Result<format::ObjectSymbols> object = objfile::readElfObject(path);
  EXPECT_TRUE(object) << object.error().message();
  return object ? object.take() : format::ObjectSymbols{};
}

// A static function is in .symtab only: once stripped, only a debug file names it.
std::string withHiddenHelper() {
  return std::string(kThreeFunctionsSource) +
         "__attribute__((noinline)) static int hidden_helper(int x) {"
         " return x * 7 + incise_alpha(x); }\n"
         "int (*volatile keep_hidden)(int) = hidden_helper;\n";
}

void copyInto(const std::string& file, const std::string& destination) {
  std::filesystem::create_directories(std::filesystem::path(destination).parent_path());
  std::filesystem::copy_file(file, destination);
}

TEST(SymbolizerElf, PieFromEmbeddedTableAtLoadBias) {
  TempDir dir;
  const std::string pie = compileC(dir, "app", kThreeFunctionsSource, "-fPIE -pie");
  const uint64_t beta = nmAddress(pie, "incise_beta");
  ASSERT_NE(beta, 0u);
  format::Metadata metadata;
  metadata.objects.push_back(readOrFail(pie));
  metadata.objects.back().path = "/usr/bin/app";
  metadata.mappings = loaderMappings(metadata.objects.back(), kPid, kPieBias, "/usr/bin/app");

  Symbolizer symbolizer(metadata, isolated());
  const Frame& frame = symbolizer.lookup(kPid, kPieBias + beta + 5, 1000);
  EXPECT_EQ(frame.function, "incise_beta");
  EXPECT_EQ(frame.name, "incise_beta");
  EXPECT_EQ(frame.module, "app");
  EXPECT_EQ(frame.module_offset, beta + 5);
  EXPECT_EQ(frame.symbol_offset, 5u);
  EXPECT_EQ(frame.source, SymbolSource::kEmbedded);
  EXPECT_FALSE(frame.kernel);

  // The same address again is a cache hit returning the same frame.
  const uint64_t misses = symbolizer.counters().cache_misses;
  EXPECT_EQ(&symbolizer.lookup(kPid, kPieBias + beta + 5, 2000), &frame);
  EXPECT_EQ(symbolizer.counters().cache_misses, misses);
  EXPECT_EQ(symbolizer.counters().unsymbolized_frames, 0u);
}

TEST(SymbolizerElf, StaticExecutableFromSymfs) {
  TempDir dir;
  const std::string exe = compileC(dir, "server", kThreeFunctionsSource, "-static -no-pie");
  const uint64_t gamma = nmAddress(exe, "incise_gamma");
  ASSERT_NE(gamma, 0u);
  copyInto(exe, dir.file("sysroot/opt/svc/server"));
  format::Metadata metadata;  // nothing embedded: the file comes from --symfs
  metadata.mappings = loaderMappings(readOrFail(exe), kPid, 0, "/opt/svc/server");
  for (auto& mapping : metadata.mappings) mapping.build_id.clear();

  SymbolizerOptions options = isolated();
  options.symfs = dir.file("sysroot");
  Symbolizer symbolizer(metadata, options);
  const Frame& frame = symbolizer.lookup(kPid, gamma + 1, 0);
  EXPECT_EQ(frame.function, "incise_gamma");
  EXPECT_EQ(frame.module, "server");
  EXPECT_EQ(frame.source, SymbolSource::kLocal);

  // Without --symfs the trace's path is never opened.
  Symbolizer no_symfs(metadata, isolated());
  EXPECT_FALSE(no_symfs.lookup(kPid, gamma + 1, 0).known());
  EXPECT_EQ(no_symfs.counters().missing_objects, 1u);
}

TEST(SymbolizerElf, SharedLibraryFromSymfsCheckedByBuildId) {
  TempDir dir;
  const std::string library = compileC(dir, "libwork.so", kThreeFunctionsSource, "-shared -fPIC");
  const uint64_t alpha = nmAddress(library, "incise_alpha");
  ASSERT_NE(alpha, 0u);
  copyInto(library, dir.file("sysroot/usr/lib/libwork.so"));
  const format::ObjectSymbols object = readOrFail(library);

  format::Metadata metadata;
  metadata.mappings = loaderMappings(object, kPid, kLibraryBias, "/usr/lib/libwork.so");
  // Another process had a different build of the same path mapped.
  auto other_build = loaderMappings(object, kPid + 1, kLibraryBias, "/usr/lib/libwork.so");
  for (auto& mapping : other_build) mapping.build_id = std::string(20, '\x42');
  metadata.mappings.insert(metadata.mappings.end(), other_build.begin(), other_build.end());

  SymbolizerOptions options = isolated();
  options.symfs = dir.file("sysroot");
  Symbolizer symbolizer(metadata, options);
  const Frame& frame = symbolizer.lookup(kPid, kLibraryBias + alpha + 2, 0);
  EXPECT_EQ(frame.function, "incise_alpha");
  EXPECT_EQ(frame.module, "libwork.so");
  EXPECT_EQ(frame.source, SymbolSource::kLocal);

  const Frame& mismatched = symbolizer.lookup(kPid + 1, kLibraryBias + alpha + 2, 0);
  EXPECT_FALSE(mismatched.known());
  EXPECT_EQ(
      mismatched.name, "libwork.so+" + [&] {
        char text[32];
        snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(alpha + 2));
        return std::string(text);
      }());
  EXPECT_GE(symbolizer.counters().build_id_mismatches, 1u);
}

// A stripped binary whose static function lives only in a separate debug
// file, found by build-id in a debug directory laid out as .build-id/xx/rest.debug.
TEST(SymbolizerElf, StrippedBinaryWithDebugFileByBuildId) {
  TempDir dir;
  const std::string pie = compileC(dir, "stripped", withHiddenHelper(), "-fPIE -pie");
  const uint64_t hidden = nmAddress(pie, "hidden_helper");
  ASSERT_NE(hidden, 0u) << "nm should list the static function before stripping";
  Result<std::string> build_id = objfile::readBuildId(pie);
  ASSERT_TRUE(build_id) << build_id.error().message();
  const std::string hex = hexBytes(*build_id);
  const std::string debug_dir = dir.file("debug");
  const std::string debug_file =
      debug_dir + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
  std::filesystem::create_directories(std::filesystem::path(debug_file).parent_path());
  ASSERT_TRUE(incise::testing::run("objcopy --only-keep-debug " + pie + " " + debug_file));
  ASSERT_TRUE(incise::testing::run("strip --strip-all " + pie));
  ASSERT_EQ(nmAddress(pie, "hidden_helper"), 0u) << "strip should have removed it";

  // The recorder embedded what the stripped file has: segments, .dynsym, no hidden_helper.
  format::Metadata metadata;
  metadata.objects.push_back(readOrFail(pie));
  metadata.objects.back().path = "/opt/app/stripped";
  metadata.objects.back().symbols.clear();
  metadata.mappings = loaderMappings(metadata.objects.back(), kPid, kPieBias, "/opt/app/stripped");

  SymbolizerOptions options = isolated();
  options.debug_dirs = {debug_dir};
  Symbolizer symbolizer(metadata, options);
  const Frame& frame = symbolizer.lookup(kPid, kPieBias + hidden + 3, 0);
  EXPECT_EQ(frame.function, "hidden_helper");
  EXPECT_EQ(frame.source, SymbolSource::kLocal);
  EXPECT_EQ(frame.module, "stripped");

  // Without the debug directory the frame stays, as module+offset.
  Symbolizer without(metadata, isolated());
  const Frame& unknown = without.lookup(kPid, kPieBias + hidden + 3, 0);
  EXPECT_FALSE(unknown.known());
  EXPECT_EQ(unknown.module, "stripped");
  EXPECT_EQ(unknown.module_offset, hidden + 3);
  EXPECT_EQ(unknown.name.rfind("stripped+0x", 0), 0u) << unknown.name;
  EXPECT_EQ(without.counters().missing_objects, 1u);
  EXPECT_EQ(without.counters().unsymbolized_frames, 1u);
}

TEST(SymbolizerElf, DebugLinkNextToTheBinaryUnderSymfs) {
  TempDir dir;
  const std::string library = compileC(dir, "liblinked.so", withHiddenHelper(), "-shared -fPIC");
  const uint64_t hidden = nmAddress(library, "hidden_helper");
  ASSERT_NE(hidden, 0u);
  const std::string installed = dir.file("sysroot/usr/lib/liblinked.so");
  copyInto(library, installed);
  const std::string debug = dir.file("sysroot/usr/lib/.debug/liblinked.so.dbg");
  std::filesystem::create_directories(std::filesystem::path(debug).parent_path());
  ASSERT_TRUE(incise::testing::run("objcopy --only-keep-debug " + installed + " " + debug));
  // --strip-all drops .symtab: only the linked debug file still names hidden_helper.
  ASSERT_TRUE(incise::testing::run("strip --strip-all " + installed));
  ASSERT_TRUE(incise::testing::run("cd " + std::filesystem::path(debug).parent_path().string() +
                                   " && objcopy --add-gnu-debuglink=liblinked.so.dbg " +
                                   installed));
  format::Metadata metadata;
  metadata.mappings =
      loaderMappings(readOrFail(installed), kPid, kLibraryBias, "/usr/lib/liblinked.so");
  SymbolizerOptions options = isolated();
  options.symfs = dir.file("sysroot");
  Symbolizer symbolizer(metadata, options);
  const Frame& frame = symbolizer.lookup(kPid, kLibraryBias + hidden + 1, 0);
  EXPECT_EQ(frame.function, "hidden_helper");
  EXPECT_EQ(frame.source, SymbolSource::kLocal);
}

// A debug directory laid out as .build-id/xx/rest.debug, the name taken
// from the debug file's own build-id note (as objcopy --only-keep-debug
// keeps it); returns the directory.
std::string debugDirWith(const TempDir& dir, const std::string& debug_file) {
  Result<std::string> build_id = objfile::readBuildId(debug_file);
  EXPECT_TRUE(build_id) << build_id.error().message();
  const std::string hex = build_id ? hexBytes(*build_id) : "00";
  const std::string debug_dir = dir.file("debug");
  copyInto(debug_file,
           debug_dir + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug");
  return debug_dir;
}

// What the recorder of a stripped library embeds (its .dynsym names the
// exported functions) loses to the full .symtab of a local debug file: the
// static function is named, and so are the exported ones, from the file.
TEST(SymbolizerElf, ALocalDebugFileBeatsTheEmbeddedDynsym) {
  TempDir dir;
  const std::string library = compileC(dir, "libwork.so", withHiddenHelper(), "-shared -fPIC");
  const uint64_t hidden = nmAddress(library, "hidden_helper");
  const uint64_t alpha = nmAddress(library, "incise_alpha");
  ASSERT_NE(hidden, 0u);
  ASSERT_TRUE(incise::testing::run("objcopy --only-keep-debug " + library + " " +
                                   dir.file("libwork.debug")));
  ASSERT_TRUE(incise::testing::run("strip --strip-all " + library));
  const std::string debug_dir = debugDirWith(dir, dir.file("libwork.debug"));

  format::Metadata metadata;
  metadata.objects.push_back(readOrFail(library));
  metadata.objects.back().path = "/usr/lib/libwork.so";
  ASSERT_FALSE(metadata.objects.back().symbols.empty()) << "the .dynsym should be embedded";
  metadata.mappings =
      loaderMappings(metadata.objects.back(), kPid, kLibraryBias, "/usr/lib/libwork.so");

  Symbolizer embedded_only(metadata, isolated());
  EXPECT_FALSE(embedded_only.lookup(kPid, kLibraryBias + hidden + 2, 0).known());
  EXPECT_EQ(embedded_only.lookup(kPid, kLibraryBias + alpha + 2, 0).source,
            SymbolSource::kEmbedded);

  SymbolizerOptions options = isolated();
  options.debug_dirs = {debug_dir};
  Symbolizer symbolizer(metadata, options);
  const Frame& frame = symbolizer.lookup(kPid, kLibraryBias + hidden + 2, 0);
  EXPECT_EQ(frame.function, "hidden_helper");
  EXPECT_EQ(frame.source, SymbolSource::kLocal);
  const Frame& exported = symbolizer.lookup(kPid, kLibraryBias + alpha + 2, 0);
  EXPECT_EQ(exported.function, "incise_alpha");
  EXPECT_EQ(exported.source, SymbolSource::kLocal);
  EXPECT_EQ(symbolizer.counters().unsymbolized_frames, 0u);
}

// A stripped object with no debug file: addresses of a function nothing
// names share one row per function, named from its FDE's start.
TEST(SymbolizerElf, AnUnnamedFunctionIsOneRowNamedFromItsFde) {
  TempDir dir;
  const std::string pie = compileC(dir, "stripped", withHiddenHelper(), "-fPIE -pie");
  const uint64_t hidden = nmAddress(pie, "hidden_helper");
  const uint64_t beta = nmAddress(pie, "incise_beta");
  ASSERT_NE(hidden, 0u);
  ASSERT_TRUE(incise::testing::run("strip --strip-all " + pie));
  char hex[32];
  snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(hidden));
  const std::string expected = std::string("stripped!fn_") + hex;

  // Three ways the ranges arrive: the .eh_frame embedded (-g dwarf), the
  // binary under --symfs, nameless symbols the recorder embeds for its hits.
  format::ObjectSymbols with_eh_frame = readOrFail(pie);
  with_eh_frame.path = "/opt/app/stripped";
  Result<objfile::UnwindTables> tables = objfile::readUnwindTables(pie);
  ASSERT_TRUE(tables) << tables.error().message();
  objfile::embedUnwindTables(*tables, with_eh_frame);
  format::ObjectSymbols bare = readOrFail(pie);
  bare.path = "/opt/app/stripped";
  format::ObjectSymbols nameless = bare;
  for (const objfile::FunctionRange& range :
       objfile::readFdeRanges(tables->eh_frame.bytes, tables->eh_frame.vaddr)) {
    if (range.start == hidden)
      nameless.symbols.push_back({range.start, range.end - range.start, ""});
  }
  copyInto(pie, dir.file("sysroot/opt/app/stripped"));

  struct Case {
    const char* what;
    format::ObjectSymbols object;
    bool symfs;
  };
  for (const Case& test :
       {Case{"embedded .eh_frame", with_eh_frame, false}, Case{"binary under --symfs", bare, true},
        Case{"nameless embedded symbols", nameless, false}}) {
    SCOPED_TRACE(test.what);
    format::Metadata metadata;
    metadata.objects.push_back(test.object);
    metadata.mappings = loaderMappings(test.object, kPid, kPieBias, "/opt/app/stripped");
    SymbolizerOptions options = isolated();
    if (test.symfs) options.symfs = dir.file("sysroot");
    Symbolizer symbolizer(metadata, options);
    const Frame& first = symbolizer.lookup(kPid, kPieBias + hidden + 1, 0);
    const Frame& second = symbolizer.lookup(kPid, kPieBias + hidden + 4, 0);
    EXPECT_EQ(first.name, expected);
    EXPECT_EQ(second.name, expected);
    EXPECT_NE(first.id, second.id);  // distinct addresses, one name
    EXPECT_FALSE(first.known());     // still counted as unnamed
    EXPECT_EQ(second.symbol_offset, 4u);
    EXPECT_EQ(symbolizer.counters().unsymbolized_frames, 2u);
    if (!test.symfs && test.object.eh_frame.empty()) continue;
    // Another unnamed function gets its own row.
    EXPECT_EQ(symbolizer.lookup(kPid, kPieBias + beta + 1, 0).name.rfind("stripped!fn_", 0), 0u);
    EXPECT_NE(symbolizer.lookup(kPid, kPieBias + beta + 1, 0).name, expected);
  }
}

TEST(SymbolizerElf, TracePathsNeverEscapeSymfs) {
  TempDir dir;
  const std::string library = compileC(dir, "libsecret.so", kThreeFunctionsSource, "-shared -fPIC");
  const uint64_t alpha = nmAddress(library, "incise_alpha");
  // The real file sits beside the symfs, reachable only through "..".
  copyInto(library, dir.file("secret/libsecret.so"));
  std::filesystem::create_directories(dir.file("sysroot/lib"));
  const format::ObjectSymbols object = readOrFail(library);

  SymbolizerOptions options = isolated();
  options.symfs = dir.file("sysroot");
  const std::vector<std::string> hostile = {"../secret/libsecret.so", "/../secret/libsecret.so",
                                            "/lib/../../secret/libsecret.so",
                                            "/./lib/./../../secret/libsecret.so"};
  uint32_t pid = 1;
  format::Metadata metadata;
  for (const std::string& path : hostile) {
    auto mappings = loaderMappings(object, pid++, kLibraryBias, path);
    for (auto& mapping : mappings) mapping.build_id.clear();
    metadata.mappings.insert(metadata.mappings.end(), mappings.begin(), mappings.end());
  }
  // An embedded object may not point its debuglink outside either.
  format::ObjectSymbols linked;
  linked.path = "/lib/liblinked.so";
  linked.debug_link = "../../secret/libsecret.so";
  linked.segments = object.segments;
  metadata.objects.push_back(linked);
  auto linked_mappings = loaderMappings(object, pid++, kLibraryBias, linked.path);
  for (auto& mapping : linked_mappings) mapping.build_id.clear();
  metadata.mappings.insert(metadata.mappings.end(), linked_mappings.begin(), linked_mappings.end());

  Symbolizer symbolizer(metadata, options);
  for (uint32_t p = 1; p < pid; ++p) {
    const Frame& frame = symbolizer.lookup(p, kLibraryBias + alpha, 0);
    EXPECT_FALSE(frame.known()) << "pid " << p << " read a file outside --symfs";
  }
  EXPECT_EQ(symbolizer.counters().refused_paths, 3u + 1u);  // "../x" is relative: not a file path

  EXPECT_EQ(DebugFileFinder::pathUnderRoot("/srv/root/", "/usr//lib/./libc.so.6"),
            "/srv/root/usr/lib/libc.so.6");
  EXPECT_EQ(DebugFileFinder::pathUnderRoot("/", "/usr/lib/libc.so.6"), "/usr/lib/libc.so.6");
  EXPECT_EQ(DebugFileFinder::pathUnderRoot("/srv/root", "/usr/../../etc/shadow"), std::nullopt);
  EXPECT_EQ(DebugFileFinder::pathUnderRoot("/srv/root", "etc/shadow"), std::nullopt);
  EXPECT_EQ(DebugFileFinder::pathUnderRoot("/srv/root", "/"), std::nullopt);
  EXPECT_EQ(DebugFileFinder::pathUnderRoot("", "/etc/shadow"), std::nullopt);
  EXPECT_EQ(DebugFileFinder::pathUnderRoot("/srv/root", std::string_view("/etc\0/x", 7)),
            std::nullopt);
}

}  // namespace
}  // namespace incise::analyzer
