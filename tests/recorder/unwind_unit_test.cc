// The recorder's side of in-kernel unwinding, without BPF: /proc parsing,
// the 8-byte row encoding, and load biases of real mappings (this test's own
// /proc/self/maps against its own symbols).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "objfile/unwind_tables.h"
#include "recorder/metadata/process_image.h"
#include "recorder/metadata/unwind_rows.h"

namespace incise::recorder {
namespace {

TEST(ProcessImage, ParsesMapsLines) {
  ExecMapping m;
  bool executable = false;
  ASSERT_TRUE(parseExecMapping(
      "7f2c1a028000-7f2c1a17d000 r-xp 00028000 fe:01 1837  /usr/lib/x86_64-linux-gnu/libc.so.6", m,
      executable));
  EXPECT_TRUE(executable);
  EXPECT_EQ(m.start, 0x7f2c1a028000u);
  EXPECT_EQ(m.end, 0x7f2c1a17d000u);
  EXPECT_EQ(m.offset, 0x28000u);
  EXPECT_EQ(m.inode, 1837u);
  EXPECT_EQ(m.device, makedev(0xfe, 1));
  EXPECT_EQ(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_TRUE(m.fileBacked());
  EXPECT_FALSE(m.deleted());

  ASSERT_TRUE(parseExecMapping("7ffd1000-7ffd3000 r-xp 00000000 00:00 0  [vdso]", m, executable));
  EXPECT_FALSE(m.fileBacked());
  EXPECT_EQ(m.device, 0u);
  EXPECT_EQ(m.path, "[vdso]");
  ASSERT_TRUE(parseExecMapping("1000-2000 rw-p 00000000 00:00 0", m, executable));
  EXPECT_FALSE(executable);
  EXPECT_EQ(m.path, "");
  ASSERT_TRUE(
      parseExecMapping("1000-2000 r-xp 00000000 08:02 77 /tmp/a b (deleted)", m, executable));
  EXPECT_TRUE(m.deleted());
  EXPECT_EQ(m.path, "/tmp/a b (deleted)");

  for (const char* bad : {"", "garbage", "2000-1000 r-xp 0 00:00 0", "1000-2000 r-xp 0 0000 0",
                          "1000-zz r-xp 0 00:00 0", "1000-2000 r 0 00:00 0"})
    EXPECT_FALSE(parseExecMapping(bad, m, executable)) << bad;
}

TEST(ProcessImage, StartStackIsField28EvenWithParenthesesInTheName) {
  std::string fields;
  for (int field = 3; field <= 30; ++field)
    fields += " " + std::to_string(field == 28 ? 140737 : field);
  EXPECT_EQ(parseStartStack("123 (a) b) c)" + fields), 140737u);
  EXPECT_EQ(parseStartStack("123 (x)"), 0u);
  EXPECT_EQ(parseStartStack("no parenthesis"), 0u);
}

TEST(ProcessImage, ReadsItsOwnExecutableMappings) {
  Result<ProcessImage> image = readProcessImage("/proc", static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(image) << image.error().message();
  EXPECT_NE(image->start_stack, 0u);
  ASSERT_FALSE(image->mappings.empty());
  auto code = reinterpret_cast<uint64_t>(&parseStartStack);
  bool found = false;
  for (size_t i = 0; i < image->mappings.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(image->mappings[i - 1].start, image->mappings[i].start);
    }
    found |= code >= image->mappings[i].start && code < image->mappings[i].end;
  }
  EXPECT_TRUE(found) << "this test's own code is in an executable mapping";
  EXPECT_FALSE(readProcessImage("/proc", 0x7ffffff0));
}

TEST(UnwindRows, EncodesEveryRuleShape) {
  using objfile::CfaRule;
  using objfile::CfiRow;
  using objfile::RbpRule;
  unwind_row r = encodeUnwindRow(CfiRow{.address = 0x1131,
                                        .cfa = CfaRule::kRspOffset,
                                        .rbp = RbpRule::kAtCfa,
                                        .offset = 16,
                                        .rbp_offset = -16});
  EXPECT_EQ(r.address, 0x1131u);
  EXPECT_EQ(r.cfa, UNWIND_CFA_RSP);
  EXPECT_EQ(r.offset, 16);
  EXPECT_EQ(r.rbp, UNWIND_RBP_AT_CFA | ((-2) & UNWIND_RBP_OFFSET_MASK));
  // A 70,000-byte frame is counted in words.
  r = encodeUnwindRow(CfiRow{.cfa = CfaRule::kRspOffset, .offset = 70008});
  EXPECT_EQ(r.cfa, UNWIND_CFA_RSP | UNWIND_CFA_SCALED);
  EXPECT_EQ(r.offset, 70008 / 8);
  // Past what even words hold, or not a multiple of 8: a frame-pointer step.
  r = encodeUnwindRow(CfiRow{.cfa = CfaRule::kRspOffset, .offset = 70004});
  EXPECT_EQ(r.cfa, UNWIND_CFA_UNSUPPORTED);
  // rbp saved too far away, or at an odd offset: not known.
  r = encodeUnwindRow(
      CfiRow{.cfa = CfaRule::kRspOffset, .rbp = RbpRule::kAtCfa, .offset = 8, .rbp_offset = -264});
  EXPECT_EQ(r.rbp, UNWIND_RBP_UNKNOWN);
  r = encodeUnwindRow(CfiRow{.cfa = CfaRule::kDerefRbp, .rbp = RbpRule::kAtRbp, .offset = -8});
  EXPECT_EQ(r.cfa, UNWIND_CFA_DEREF_RBP);
  EXPECT_EQ(r.offset, -8);
  EXPECT_EQ(r.rbp, UNWIND_RBP_AT_RBP);
  EXPECT_EQ(encodeUnwindRow(CfiRow{.cfa = CfaRule::kOutermost}).cfa, UNWIND_CFA_OUTERMOST);
  EXPECT_EQ(encodeUnwindRow(CfiRow{.cfa = CfaRule::kPlt, .offset = 11}).offset, 11);
}

// The lookup bpf/unwind.bpf.h makes in a block: the page index bounds a
// binary search to the rows from the one covering address's page start to
// the one covering the next page's; nullopt when no row covers address.
std::optional<uint32_t> blockLookup(const UnwindBlock& block, uint64_t address) {
  if (address < block.page_base) return std::nullopt;
  uint64_t page = (address - block.page_base) >> UNWIND_INDEX_PAGE_SHIFT;
  if (page >= block.pages) return std::nullopt;
  uint32_t rows = static_cast<uint32_t>(block.slots.size()) - block.index_elements;
  uint32_t low = block.slots[page].page_rows[0];
  uint32_t high = std::min(block.slots[page].page_rows[1], rows - 1);
  if (low > high) return std::nullopt;
  uint32_t first = block.index_elements + low, l = first, h = block.index_elements + high + 1;
  while (l < h) {
    uint32_t middle = l + (h - l) / 2;
    if (block.slots[middle].row.address <= address)
      l = middle + 1;
    else
      h = middle;
  }
  if (l <= first) return std::nullopt;
  return l - 1 - block.index_elements;
}

TEST(UnwindRows, PageIndexKnownAnswer) {
  // Rows at 0x1100, 0x1200 (page 0), 0x1c10 (page 3), none in pages 1-2.
  constexpr uint64_t kPage = UNWIND_INDEX_PAGE_BYTES;
  static_assert(kPage == 0x400, "the addresses below are placed on 1 KiB pages");
  std::vector<unwind_row> rows = {{.address = 0x1100}, {.address = 0x1200}, {.address = 0x1c10}};
  UnwindBlock block = unwindBlock(rows);
  EXPECT_EQ(block.page_base, 0x1000u);
  EXPECT_EQ(block.pages, 4u);                  // pages 0x1000, 0x1400, 0x1800, 0x1c00
  EXPECT_EQ(block.index_elements, 4u);         // a slot per page
  EXPECT_EQ(block.slots[0].page_rows[0], 0u);  // 0x1000: before any row, search from 0
  EXPECT_EQ(block.slots[0].page_rows[1], 1u);  // 0x1400: covered by 0x1200
  EXPECT_EQ(block.slots[1].page_rows[0], 1u);  // 0x1400 again
  EXPECT_EQ(block.slots[2].page_rows[1], 1u);  // 0x1c00: still 0x1200
  EXPECT_EQ(block.slots[3].page_rows[0], 1u);  // 0x1c00 again
  EXPECT_EQ(block.slots[3].page_rows[1], 2u);  // 0x2000: 0x1c10
  EXPECT_EQ(block.slots[4].row.address, 0x1100u);
  EXPECT_EQ(blockLookup(block, 0x10ff), std::nullopt);
  EXPECT_EQ(blockLookup(block, 0x1100), 0u);
  EXPECT_EQ(blockLookup(block, 0x1500), 1u);
  EXPECT_EQ(blockLookup(block, 0x1c0f), 1u);
  EXPECT_EQ(blockLookup(block, 0x1fff), 2u);
  EXPECT_EQ(blockLookup(block, 0x2000), std::nullopt);
}

// On libc's real rows, the index-bounded lookup finds the row a search of
// all rows finds, at every row's address, just before it and mid-way.
TEST(UnwindRows, PageIndexAgreesWithAFullSearchOnLibc) {
  void* handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  Dl_info info{};
  ASSERT_NE(dladdr(dlsym(handle, "qsort"), &info), 0);
  dlclose(handle);
  Result<ObjectUnwindRows> object = readObjectUnwindRows(info.dli_fname);
  ASSERT_TRUE(object) << object.error().message();
  const std::vector<unwind_row>& rows = object->rows;
  ASSERT_GT(rows.size(), 1000u);
  UnwindBlock block = unwindBlock(rows);
  size_t checked = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    uint64_t next = i + 1 < rows.size() ? rows[i + 1].address : rows[i].address + 1;
    for (uint64_t address : {uint64_t{rows[i].address}, uint64_t{rows[i].address} - 1,
                             (rows[i].address + next) / 2, next - 1}) {
      auto after = std::upper_bound(rows.begin(), rows.end(), address,
                                    [](uint64_t a, const unwind_row& r) { return a < r.address; });
      std::optional<uint32_t> expected;
      if (after != rows.begin()) expected = static_cast<uint32_t>(after - rows.begin() - 1);
      ASSERT_EQ(blockLookup(block, address), expected) << std::hex << address;
      ++checked;
    }
  }
  EXPECT_EQ(checked, rows.size() * 4);
}

// Load bias of libc as mapped into this process: the ELF address it gives
// for dlsym's answer must be the symbol's address in libc's own symbol table.
TEST(UnwindRows, LoadBiasOfARealMapping) {
  void* handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto qsort_address = reinterpret_cast<uint64_t>(dlsym(handle, "qsort"));
  dlclose(handle);
  Result<ProcessImage> image = readProcessImage("/proc", static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(image);
  const ExecMapping* libc = nullptr;
  for (const ExecMapping& m : image->mappings) {
    if (qsort_address >= m.start && qsort_address < m.end) libc = &m;
  }
  ASSERT_NE(libc, nullptr);
  Result<ObjectUnwindRows> rows = readObjectUnwindRows(libc->path);
  ASSERT_TRUE(rows) << rows.error().message();
  EXPECT_GT(rows->rows.size(), 1000u);
  std::optional<uint64_t> bias =
      objfile::loadBias(rows->load_segments, libc->start, libc->end, libc->offset);
  ASSERT_TRUE(bias);
  // nm's view of qsort in the file.
  std::string command =
      "nm -D --defined-only " + libc->path + " | awk '$3 ~ /^qsort(@|$)/ {print $1; exit}'";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char text[64] = {};
  ASSERT_NE(fgets(text, sizeof text, pipe), nullptr);
  pclose(pipe);
  EXPECT_EQ(qsort_address - *bias, std::stoull(text, nullptr, 16));
  EXPECT_FALSE(objfile::loadBias(rows->load_segments, 0x1000, 0x1000, 0));
}

}  // namespace
}  // namespace incise::recorder
