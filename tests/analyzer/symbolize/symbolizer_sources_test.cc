// The symbolizer's non-ELF sources: perf maps over time, kernel symbols from
// kallsyms text, mappings replaced over time, and unknown frames.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>

#include "analyzer/symbolize/symbolizer.h"
#include "objfile/kallsyms.h"
#include "objfile/perf_map.h"

namespace incise::analyzer {
namespace {

constexpr uint32_t kPid = 77;

SymbolizerOptions isolated() {
  SymbolizerOptions options;
  options.system_debug_dir.clear();
  options.use_debuginfod = false;
  return options;
}

format::Mapping anonymousExec(uint32_t pid, uint64_t start, uint64_t end) {
  format::Mapping mapping;
  mapping.pid = pid;
  mapping.start = start;
  mapping.end = end;
  mapping.prot = PROT_READ | PROT_EXEC;
  return mapping;
}

format::PerfMapSnapshot snapshot(uint32_t pid, uint64_t time, std::string_view text) {
  return {pid, time, objfile::parsePerfMap(text)};
}

TEST(SymbolizerPerfMap, AddressReusedByTwoSnapshots) {
  format::Metadata metadata;
  metadata.mappings.push_back(anonymousExec(kPid, 0x3ef00000, 0x3f000000));
  metadata.perf_maps.push_back(snapshot(kPid, 1000,
                                        "3ef0a9c0 40 LazyCompile:~first app.js:10\n"
                                        "3ef0b000 20 Builtin: Stays\n"));
  // The second snapshot repeats the old lines and reuses 3ef0a9c0 for new code.
  metadata.perf_maps.push_back(snapshot(kPid, 2000,
                                        "3ef0a9c0 40 LazyCompile:~first app.js:10\n"
                                        "3ef0b000 20 Builtin: Stays\n"
                                        "3ef0a9c0 30 LazyCompile:*second app.js:20\n"));
  Symbolizer symbolizer(metadata, isolated());
  const uint64_t reused = 0x3ef0a9c8;

  // The recorder polls perf maps about once a second, so code the JIT wrote
  // (and ran) before the first snapshot is named by that snapshot's entry.
  const Frame& early = symbolizer.lookup(kPid, reused, 500);
  EXPECT_EQ(early.function, "LazyCompile:~first app.js:10");

  EXPECT_EQ(symbolizer.lookup(kPid, reused, 1500).function, "LazyCompile:~first app.js:10");
  const Frame& late = symbolizer.lookup(kPid, reused, 2500);
  EXPECT_EQ(late.function, "LazyCompile:*second app.js:20");
  EXPECT_EQ(late.source, SymbolSource::kPerfMap);
  EXPECT_EQ(late.symbol_offset, 8u);
  EXPECT_EQ(late.module, "perf-77.map");
  // Back in time: the cached answer must not leak across the snapshot boundary.
  EXPECT_EQ(symbolizer.lookup(kPid, reused, 1999).function, "LazyCompile:~first app.js:10");
  EXPECT_EQ(symbolizer.lookup(kPid, reused, 2000).function, "LazyCompile:*second app.js:20");
  // Past the new, shorter entry the old one still covers until its end.
  EXPECT_EQ(symbolizer.lookup(kPid, 0x3ef0a9f8, 2500).function, "LazyCompile:~first app.js:10");
  EXPECT_EQ(symbolizer.lookup(kPid, 0x3ef0b010, 2500).function, "Builtin: Stays");
  // Another pid's perf map is not this pid's.
  EXPECT_FALSE(symbolizer.lookup(kPid + 1, reused, 2500).known());
}

TEST(SymbolizerPerfMap, UnmappedAddressStillUsesThePerfMap) {
  format::Metadata metadata;
  metadata.perf_maps.push_back(snapshot(kPid, 0, "7f0000001000 100 jitted_loop\n"));
  Symbolizer symbolizer(metadata, isolated());
  EXPECT_EQ(symbolizer.lookup(kPid, 0x7f0000001080, 10).function, "jitted_loop");
}

TEST(SymbolizerKernel, KallsymsTextResolvesKernelAddresses) {
  const std::string kallsyms =
      "ffffffff81000000 T _stext\n"
      "ffffffff81234000 T handle_mm_fault\n"
      "ffffffff81234800 t __do_fault\n"
      "ffffffff81236000 T schedule\n"
      "ffffffffc0a01000 t ext4_fill_super\t[ext4]\n";
  format::Metadata metadata;
  metadata.kernel_symbols = objfile::parseKallsyms(kallsyms);
  Symbolizer symbolizer(metadata, isolated());

  const Frame& fault = symbolizer.lookup(kPid, 0xffffffff81234810, 0);
  EXPECT_EQ(fault.function, "__do_fault");
  EXPECT_EQ(fault.symbol_offset, 0x10u);
  EXPECT_TRUE(fault.kernel);
  EXPECT_EQ(fault.module, "[kernel.kallsyms]");
  EXPECT_EQ(fault.source, SymbolSource::kKernel);
  // Kernel answers do not depend on the pid.
  EXPECT_EQ(&symbolizer.lookup(kPid + 9, 0xffffffff81234810, 5), &fault);

  const Frame& module = symbolizer.lookup(kPid, 0xffffffffc0a01004, 0);
  EXPECT_EQ(module.function, "ext4_fill_super");
  EXPECT_EQ(module.module, "[ext4]");

  const Frame& below = symbolizer.lookup(kPid, 0xffffffff80000000, 0);
  EXPECT_FALSE(below.known());
  EXPECT_TRUE(below.kernel);
  EXPECT_EQ(below.name, "[unknown] 0xffffffff80000000");
  // Far beyond the last symbol is a miss, not ext4_fill_super.
  EXPECT_FALSE(symbolizer.lookup(kPid, 0xffffffffff000000, 0).known());
}

format::ObjectSymbols syntheticObject(const std::string& path, const std::string& build_id,
                                      std::vector<format::Symbol> symbols) {
  format::ObjectSymbols object;
  object.path = path;
  object.build_id = build_id;
  object.symbols = std::move(symbols);
  object.segments.push_back({0x1000, 0x1000, 0x9000, 0x9000, 5});
  return object;
}

format::Mapping fileMapping(uint32_t pid, uint64_t start, const std::string& path,
                            const std::string& build_id, uint64_t time) {
  format::Mapping mapping;
  mapping.pid = pid;
  mapping.start = start;
  mapping.end = start + 0x9000;
  mapping.file_offset = 0x1000;
  mapping.path = path;
  mapping.build_id = build_id;
  mapping.prot = PROT_READ | PROT_EXEC;
  mapping.time = time;
  return mapping;
}

TEST(SymbolizerMappings, LaterMappingReplacesEarlierFromItsTime) {
  format::Metadata metadata;
  metadata.objects.push_back(
      syntheticObject("/lib/libold.so", "old-id", {{0x2000, 0x100, "_ZN3old4workEv"}}));
  metadata.objects.push_back(
      syntheticObject("/lib/libnew.so", "new-id", {{0x2000, 0x100, "_ZN3new4workEv"}}));
  metadata.mappings.push_back(fileMapping(kPid, 0x7f0000001000, "/lib/libold.so", "old-id", 100));
  metadata.mappings.push_back(fileMapping(kPid, 0x7f0000001000, "/lib/libnew.so", "new-id", 500));
  Symbolizer symbolizer(metadata, isolated());
  const uint64_t address = 0x7f0000002010;
  EXPECT_EQ(symbolizer.lookup(kPid, address, 200).function, "old::work()");
  EXPECT_EQ(symbolizer.lookup(kPid, address, 600).module, "libnew.so");
  EXPECT_EQ(symbolizer.lookup(kPid, address, 600).function, "new::work()");
  EXPECT_EQ(symbolizer.lookup(kPid, address, 499).function, "old::work()");
  // A sample a little before the first sighting of its mapping still resolves.
  EXPECT_EQ(symbolizer.lookup(kPid, address, 50).function, "old::work()");
  EXPECT_EQ(symbolizer.counters().mapping_time_fallbacks, 1u);
}

TEST(SymbolizerUnknown, FramesAreNamedNeverDropped) {
  format::Metadata metadata;
  metadata.mappings.push_back(fileMapping(kPid, 0x7f0000001000, "/lib/libmissing.so", "", 0));
  metadata.mappings.push_back(anonymousExec(kPid, 0x10000, 0x20000));
  Symbolizer symbolizer(metadata, isolated());

  const Frame& missing = symbolizer.lookup(kPid, 0x7f0000002345, 0);
  EXPECT_EQ(missing.name, "libmissing.so+0x2345");
  EXPECT_EQ(missing.source, SymbolSource::kUnknown);
  EXPECT_EQ(symbolizer.tryLookup(kPid, 0x7f0000002345, 0), nullptr);

  EXPECT_EQ(symbolizer.lookup(kPid, 0x10010, 0).name, "[unknown] 0x10010");
  EXPECT_EQ(symbolizer.lookup(kPid, 0x5000, 0).name, "[unknown] 0x5000");
  EXPECT_EQ(symbolizer.lookup(kPid + 1, 0x5000, 0).name, "[unknown] 0x5000");

  const SymbolizeCounters& counters = symbolizer.counters();
  EXPECT_EQ(counters.lookups, 5u);
  EXPECT_EQ(counters.unsymbolized_frames, 5u);
  EXPECT_EQ(counters.missing_objects, 1u);
  size_t data_loss_nonzero = 0;
  counters.forEach([&](std::string_view, CounterSeverity severity, std::string_view, uint64_t v) {
    if (severity == CounterSeverity::kDataLoss && v) ++data_loss_nonzero;
  });
  EXPECT_EQ(data_loss_nonzero, 2u);  // unsymbolized_frames, missing_objects
}

TEST(SymbolizerUnknown, TheKernelsUprobePageIsNamed) {
  format::Metadata metadata;
  Symbolizer symbolizer(metadata, isolated());
  // The uretprobe trampoline and an out-of-line slot, as mode `all` stacks show them.
  EXPECT_EQ(symbolizer.lookup(kPid, 0x7fffffffe080, 0).name, "[uprobes]");
  EXPECT_EQ(symbolizer.lookup(kPid, 0x7fffffffe00d, 0).module, "[uprobes]");
  EXPECT_EQ(symbolizer.lookup(kPid, 0x7fffffffd000, 0).name, "[unknown] 0x7fffffffd000");
  EXPECT_EQ(symbolizer.counters().unsymbolized_frames, 1u);
}

TEST(SymbolizerFrames, DistinctFramesAreNumberedDenselyAndKeepTheirAddress) {
  format::Metadata metadata;
  metadata.mappings.push_back(anonymousExec(kPid, 0x10000, 0x20000));
  metadata.mappings.push_back(anonymousExec(kPid + 1, 0x10000, 0x20000));
  Symbolizer symbolizer(metadata, isolated());
  std::vector<const Frame*> frames;
  // More frames than one storage block holds, each looked up twice.
  for (uint64_t i = 0; i < 1500; ++i) frames.push_back(&symbolizer.lookup(kPid, 0x10000 + i, 0));
  for (uint64_t i = 0; i < 1500; ++i) {
    const Frame& again = symbolizer.lookup(kPid + 1, 0x10000 + i, 0);
    EXPECT_EQ(&again, frames[i]);  // unnamed code at one address: the same frame in every pid
    EXPECT_EQ(again.id, i);
    EXPECT_EQ(again.module_offset, 0x10000 + i);
    EXPECT_FALSE(again.outside_code);
  }
  EXPECT_EQ(frames[1499]->name, "[unknown] 0x105db");
  // Where nothing is mapped the address is no code: another frame, the same name.
  const Frame& unmapped = symbolizer.lookup(kPid + 2, 0x105db, 0);
  EXPECT_NE(&unmapped, frames[1499]);
  EXPECT_EQ(unmapped.id, 1500u);
  EXPECT_EQ(unmapped.name, "[unknown] 0x105db");
  EXPECT_TRUE(unmapped.outside_code);
}

// glibc names one memcpy/memmove body twice; perf keeps the longer name.
TEST(SymbolizerEmbedded, AnAliasTieGoesToTheLongerNameAsInPerf) {
  format::Metadata metadata;
  metadata.objects.push_back(syntheticObject("/lib/libc.so.6", "libc-id",
                                             {{0x3000, 0x80, "__memcpy_avx_unaligned_erms"},
                                              {0x3000, 0x80, "__memmove_avx_unaligned_erms"}}));
  metadata.mappings.push_back(fileMapping(kPid, 0x7f0000001000, "/lib/libc.so.6", "libc-id", 0));
  Symbolizer symbolizer(metadata, isolated());
  EXPECT_EQ(symbolizer.lookup(kPid, 0x7f0000003010, 0).function, "__memmove_avx_unaligned_erms");
}

TEST(SymbolizerEmbedded, AliasesAndSizelessSymbols) {
  format::Metadata metadata;
  metadata.objects.push_back(syntheticObject("/lib/libc.so.6", "libc-id",
                                             {{0x3000, 0x80, "__libc_malloc"},
                                              {0x3000, 0x80, "malloc"},
                                              {0x4000, 0, "asm_entry"},
                                              {0x4100, 0x10, "after_asm"}}));
  metadata.mappings.push_back(fileMapping(kPid, 0x7f0000001000, "/lib/libc.so.6", "libc-id", 0));
  Symbolizer symbolizer(metadata, isolated());
  EXPECT_EQ(symbolizer.lookup(kPid, 0x7f0000003010, 0).function, "malloc");
  EXPECT_FALSE(symbolizer.lookup(kPid, 0x7f0000003090, 0).known());  // past malloc's size
  EXPECT_EQ(symbolizer.lookup(kPid, 0x7f00000040f0, 0).function, "asm_entry");
  EXPECT_EQ(symbolizer.lookup(kPid, 0x7f0000004108, 0).function, "after_asm");
}

// Not a benchmark: prints a rough rate. Run with --gtest_also_run_disabled_tests.
TEST(SymbolizerSpeed, DISABLED_RepeatedLookupsPerSecond) {
  format::Metadata metadata;
  std::vector<format::Symbol> symbols;
  for (uint64_t i = 0; i < 20000; ++i) {
    symbols.push_back(
        {0x1000 + i * 0x40, 0x40, "_ZN5bench8functionILi" + std::to_string(i) + "EEEvv"});
  }
  metadata.objects.push_back(syntheticObject("/bin/bench", "bench-id", std::move(symbols)));
  metadata.objects.back().segments = {{0x1000, 0x1000, 0x600000, 0x600000, 5}};
  format::Mapping mapping = fileMapping(kPid, 0x555500001000, "/bin/bench", "bench-id", 0);
  mapping.end = mapping.start + 0x600000;
  metadata.mappings.push_back(mapping);
  Symbolizer symbolizer(metadata, isolated());
  constexpr int kDistinct = 4096;
  constexpr int kRounds = 500;
  uint64_t checksum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kDistinct; ++i) {
      checksum += symbolizer.lookup(kPid, 0x555500001000 + uint64_t(i) * 0x97, round).name.size();
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d lookups over %d distinct addresses: %.1f M lookups/s (checksum %llu)\n",
              kDistinct * kRounds, kDistinct, kDistinct * kRounds / seconds / 1e6,
              static_cast<unsigned long long>(checksum));
  EXPECT_EQ(symbolizer.counters().cache_misses, uint64_t{kDistinct});
}

}  // namespace
}  // namespace incise::analyzer
