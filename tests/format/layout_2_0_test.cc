// Format 2.0's smaller layout: cpu-sample rows grouped by cpu on disk and
// read back in appended order, constant columns, packed chunk headers and
// footer, and a 1.2 file still read as before.
#include <gtest/gtest.h>

#include <random>

#include "format/capnp_message.h"
#include "format/row_order.h"
#include "format/symbol_table_blob.h"
#include "schemas/trace.capnp.h"
#include "tests/format/trace_fixture.h"

namespace incise::format {
namespace {

using test_support::ExpectedTrace;
using test_support::readRows;
using test_support::TempDir;

// Samples of `cpus` cpus ticking at one period, as the recorder appends
// them: in (time, cpu) order, a thread or two per cpu. In phase, cpus tick
// together and a third of the rows tie in time with another cpu's; out of
// phase (as cpus' timers are), cpu c ticks c/cpus of a period later.
std::vector<CpuSample> interleavedSamples(size_t rows, unsigned cpus, uint64_t seed,
                                          bool in_phase = true) {
  std::mt19937_64 rng(seed);
  std::vector<CpuSample> samples;
  uint64_t tick = 42'000'000'000'000;
  while (samples.size() < rows) {
    tick += 1'001'001;
    for (unsigned cpu = 0; cpu < cpus && samples.size() < rows; ++cpu) {
      if (rng() % 4 == 0) continue;  // an idle cpu records nothing
      uint64_t jitter = in_phase && rng() % 3 == 0 ? 0 : rng() % 20'000;  // 0: a tie
      uint64_t phase = in_phase ? 0 : 1'001'001 * cpu / cpus;
      samples.push_back(CpuSample{.time = tick + phase + jitter,
                                  .cpu = cpu,
                                  .pid = 77,
                                  .tid = 100 + cpu + rng() % 2,
                                  .stack_id = 0,
                                  .weight = 1'001'001});
    }
  }
  std::stable_sort(samples.begin(), samples.end(), [](const CpuSample& a, const CpuSample& b) {
    return a.time != b.time ? a.time < b.time : a.cpu < b.cpu;
  });
  return samples;
}

std::vector<std::vector<uint64_t>> writeSamples(const std::string& path,
                                                const std::vector<CpuSample>& samples,
                                                uint32_t rows_per_chunk) {
  auto writer =
      Writer::create(path, test_support::testHeader(), {.rows_per_chunk = rows_per_chunk});
  EXPECT_TRUE(writer);
  std::vector<std::vector<uint64_t>> rows;
  for (const CpuSample& s : samples) {
    (*writer)->append(s);
    rows.push_back(test_support::fieldsOf(s));
  }
  EXPECT_TRUE((*writer)->close(samples.back().time + 1));
  return rows;
}

TEST(RowOrder, GroupedChunksReadBackInAppendedOrderTiesIncluded) {
  TempDir dir;
  for (unsigned cpus : {2u, 3u, 16u}) {
    SCOPED_TRACE(cpus);
    std::string path = dir.path("t" + std::to_string(cpus) + ".trace");
    auto written = writeSamples(path, interleavedSamples(5000, cpus, cpus), 700);
    auto reader = Reader::open(path);
    ASSERT_TRUE(reader) << reader.error().message();
    EXPECT_EQ(readRows(**reader, EventKind::kCpuSample), written);
  }
}

uint64_t storedColumnBytes(const Reader& reader) {
  uint64_t total = 0;
  for (const auto& ref : reader.chunks(EventKind::kCpuSample)) {
    auto sizes = reader.columnSizes(ref);
    EXPECT_TRUE(sizes);
    if (!sizes) continue;
    for (const ColumnSize& c : *sizes) total += c.stored_bytes;
  }
  return total;
}

TEST(RowOrder, GroupingShrinksTheChunksOfTwoCpus) {
  TempDir dir;
  constexpr size_t kRows = 20000;
  constexpr uint32_t kRowsPerChunk = 4096;
  auto samples = interleavedSamples(kRows, 2, 5, /*in_phase=*/false);
  std::string grouped_path = dir.path("grouped.trace");
  writeSamples(grouped_path, samples, kRowsPerChunk);
  // The same rows with two swapped in each chunk: out of time order, so
  // stored as appended.
  for (size_t at = 10; at + 1 < kRows; at += kRowsPerChunk) std::swap(samples[at], samples[at + 1]);
  std::string appended_path = dir.path("appended.trace");
  writeSamples(appended_path, samples, kRowsPerChunk);
  auto grouped = Reader::open(grouped_path);
  auto appended = Reader::open(appended_path);
  ASSERT_TRUE(grouped && appended);
  uint64_t grouped_bytes = storedColumnBytes(**grouped);
  uint64_t appended_bytes = storedColumnBytes(**appended);
  // Grouped, the cpu column is two runs and a cpu's threads come in runs: at
  // least half a bit per row less.
  EXPECT_LT(grouped_bytes + kRows / 16, appended_bytes)
      << grouped_bytes << " vs " << appended_bytes;
}

TEST(RowOrder, RowsOutOfTimeOrderAreStoredAsAppended) {
  TempDir dir;
  auto samples = interleavedSamples(3000, 2, 9);
  std::swap(samples[10], samples[2000]);  // a late row: grouping would not be undone exactly
  std::string path = dir.path("t.trace");
  auto written = writeSamples(path, samples, 4000);
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  EXPECT_EQ(readRows(**reader, EventKind::kCpuSample), written);
}

TEST(RowOrder, AppendedOrderIsAPermutationForAnyInput) {
  std::mt19937_64 rng(4);
  for (int round = 0; round < 200; ++round) {
    size_t n = rng() % 50;
    std::vector<uint64_t> time(n), cpu(n);
    for (size_t i = 0; i < n; ++i) {
      time[i] = rng() % 10;
      cpu[i] = rng() % 3;
    }
    std::vector<uint32_t> order = appendedOrder(time, cpu);
    std::vector<uint32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i);
  }
}

TEST(ConstantColumns, StoredInAFewBytesAndReadBackWhole) {
  TempDir dir;
  std::string path = dir.path("t.trace");
  auto written = writeSamples(path, interleavedSamples(3000, 2, 1), 1000);
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  for (const auto& ref : (*reader)->chunks(EventKind::kCpuSample)) {
    auto sizes = (*reader)->columnSizes(ref);
    ASSERT_TRUE(sizes);
    for (const ColumnSize& c : *sizes) {
      bool constant = c.id == static_cast<uint16_t>(CpuSampleColumn::pid) ||
                      c.id == static_cast<uint16_t>(CpuSampleColumn::stack_id) ||
                      c.id == static_cast<uint16_t>(CpuSampleColumn::weight) ||
                      c.id >= static_cast<uint16_t>(CpuSampleColumn::user_ip);
      EXPECT_EQ(c.encoding == Encoding::kConstant, constant) << c.id;
      if (constant) {
        EXPECT_LE(c.stored_bytes, 4u);
      }
    }
    // The empty stack copies read as empty blobs.
    auto chunk = (*reader)->readChunk(ref, ColumnSet::all());
    ASSERT_TRUE(chunk);
    EXPECT_TRUE(chunk->bytes(CpuSampleColumn::user_stack, 0).empty());
  }
  EXPECT_EQ(readRows(**reader, EventKind::kCpuSample), written);
}

TEST(PackedWords, RoundTripAndHostileInput) {
  capnp::MallocMessageBuilder message;
  auto footer = message.initRoot<schema::Footer>();
  footer.setEndMonoNs(123456789);
  footer.initChunks(3)[1].setMinTime(0xFFFFFFFFFFFFFFFF);
  std::string flat = flattenMessage(message);
  std::string packed = packedMessage(message);
  EXPECT_LT(packed.size(), flat.size());
  auto back = unpackWords(codecs::asBytes(packed), 1 << 20);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, flat);
  for (size_t cut = 1; cut < packed.size(); ++cut) {
    auto cut_back = unpackWords(codecs::asBytes(packed.substr(0, cut)), 1 << 20);
    if (cut_back) {  // a whole-word prefix may unpack
      EXPECT_NE(*cut_back, flat) << cut;
    }
  }
  // 00 FF: 256 zero words from two bytes; FF then a count promising words that are not there.
  EXPECT_FALSE(unpackWords(codecs::asBytes(std::string("\x00\xFF", 2)), 1024));
  EXPECT_TRUE(unpackWords(codecs::asBytes(std::string("\x00\xFF", 2)), 2048));
  EXPECT_FALSE(unpackWords(codecs::asBytes(std::string("\xFF"
                                                       "12345678\x05",
                                                       10)),
                           1 << 20));
  EXPECT_FALSE(unpackWords(codecs::asBytes(std::string("\x03\x01", 2)), 1 << 20));
  std::mt19937_64 rng(2);
  for (int round = 0; round < 2000; ++round) {
    std::string junk(rng() % 40, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    auto out = unpackWords(codecs::asBytes(junk), 4096);
    if (out) {
      EXPECT_LE(out->size(), 4096u);
    }
  }
}

TEST(SymbolTableBlob, RoundTripsInAnyOrderAndRejectsHostileBytes) {
  std::vector<KernelSymbol> kernel = {{0xffffffff81000000, "do_syscall_64", ""},
                                      {0xffffffff8225a6c1, "asm_sysvec_apic_timer_interrupt", ""},
                                      {0xffffffffc0001000, "ext4_read", "ext4"},
                                      {0xffffffff81000010, "", ""}};
  std::string blob = encodeKernelSymbols(kernel);
  auto back = decodeKernelSymbols(codecs::asBytes(blob));
  ASSERT_TRUE(back) << back.error().message();
  ASSERT_EQ(back->size(), kernel.size());
  for (size_t i = 0; i < kernel.size(); ++i) {
    EXPECT_EQ((*back)[i].address, kernel[i].address);
    EXPECT_EQ((*back)[i].name, kernel[i].name);
    EXPECT_EQ((*back)[i].module, kernel[i].module);
  }
  std::vector<Symbol> symbols = {{0x2060, 1, "_dl_debug_state"}, {0x1000, 0, "_start"}};
  auto symbols_back = decodeSymbols(codecs::asBytes(encodeSymbols(symbols)));
  ASSERT_TRUE(symbols_back) << symbols_back.error().message();
  ASSERT_EQ(symbols_back->size(), 2u);
  EXPECT_EQ((*symbols_back)[1].address, 0x1000u);
  EXPECT_EQ((*symbols_back)[0].size, 1u);
  EXPECT_EQ((*symbols_back)[1].name, "_start");

  for (size_t cut = 0; cut < blob.size(); ++cut) {
    EXPECT_FALSE(decodeKernelSymbols(codecs::asBytes(blob.substr(0, cut)))) << cut;
  }
  EXPECT_FALSE(decodeKernelSymbols(codecs::asBytes(blob + '\x00')));
  // A count no bytes could hold is refused before anything is sized.
  EXPECT_FALSE(decodeKernelSymbols(codecs::asBytes(std::string("\xFF\xFF\xFF\xFF\x0F", 5))));
  std::mt19937_64 rng(8);
  for (int round = 0; round < 2000; ++round) {
    std::string junk(rng() % 48, '\0');
    for (auto& c : junk) c = static_cast<char>(rng() % 4 == 0 ? rng() : rng() % 8);
    (void)decodeKernelSymbols(codecs::asBytes(junk));
    (void)decodeSymbols(codecs::asBytes(junk));
  }
}

// tests/format/data/format_1_2.trace was written by the format 1.2 writer
// (commit 06996fa) with writeRandomTrace(path, 12, {.rows_per_chunk = 16}, 40):
// unpacked chunk headers and footer, no constant or grouped columns.
TEST(Format12, AFileOfTheLastMinorVersionStillReads) {
  TempDir dir;
  ExpectedTrace expected =
      test_support::writeRandomTrace(dir.path("same-rows.trace"), 12, {.rows_per_chunk = 16}, 40);
  auto reader = Reader::open(std::string(INCISE_FORMAT_TEST_DATA) + "/format_1_2.trace");
  ASSERT_TRUE(reader) << reader.error().message();
  const Reader& r = **reader;
  EXPECT_EQ(r.header().format_minor, 2u);
  EXPECT_TRUE(r.recovery().clean()) << r.recovery().why_scanned;
  for (EventKind kind : kAllEventKinds) {
    SCOPED_TRACE(std::string(kindName(kind)));
    size_t failures = 0;
    if (static_cast<uint64_t>(kind) > test_support::kLastKindOfFormat12) {
      EXPECT_TRUE(readRows(r, kind, &failures).empty());  // newer than the file
      continue;
    }
    // Columns added since 1.2 read as 0 from it.
    std::vector<std::vector<uint64_t>> rows_in_1_2 = expected.rows[kind];
    for (auto& row : rows_in_1_2)
      std::fill(row.begin() + static_cast<std::ptrdiff_t>(test_support::columnsInFormat12(kind)),
                row.end(), 0);
    EXPECT_EQ(readRows(r, kind, &failures), rows_in_1_2);
    EXPECT_EQ(failures, 0u);
  }
  for (const auto& [id, frames] : expected.stacks) {
    auto got = r.stacks().frames(id);
    EXPECT_EQ(std::vector<uint64_t>(got.begin(), got.end()), frames) << "stack " << id;
  }
}

TEST(Metadata, SymbolsStoredAsBlobsReadBackAsLists) {
  TempDir dir;
  std::string path = dir.path("t.trace");
  auto writer = Writer::create(path, test_support::testHeader(), {});
  ASSERT_TRUE(writer);
  MetadataDelta delta = test_support::testMetadata(10, 42);
  delta.kernel_symbols.push_back(KernelSymbol{0xffffffffc0000000, "nf_hook", "nf_tables"});
  delta.objects[0].symbols.push_back(Symbol{0x900, 8, "_init"});
  (*writer)->addMetadata(delta);
  ASSERT_TRUE((*writer)->close(20));
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message();
  const Metadata& got = (*reader)->metadata();
  ASSERT_EQ(got.kernel_symbols.size(), 2u);
  EXPECT_EQ(got.kernel_symbols[1].name, "nf_hook");
  EXPECT_EQ(got.kernel_symbols[1].module, "nf_tables");
  EXPECT_EQ(got.kernel_symbols[0].address, 0xffffffff81000000u);
  ASSERT_EQ(got.objects.size(), 1u);
  ASSERT_EQ(got.objects[0].symbols.size(), 2u);
  EXPECT_EQ(got.objects[0].symbols[0].name, "_Z4mainv");
  EXPECT_EQ(got.objects[0].symbols[1].address, 0x900u);
  EXPECT_EQ(got.objects[0].symbols[1].size, 8u);
}

}  // namespace
}  // namespace incise::format
