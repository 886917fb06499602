// CfiRows against an independent reading of the same .eh_frame: readelf's
// `--debug-dump=frames-interp` table (binutils' own CFI interpreter), row by
// row, on objects built here with and without frame pointers and on the
// system's libc (Debian's, built without them, with signal and outermost
// frames); plus malformed sections, which must be skipped, not read past.
#include "objfile/cfi_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "objfile/unwind_tables.h"
#include "tests/objfile/elf_test_files.h"

namespace incise::objfile {
namespace {

using testing::compileC;
using testing::TempDir;

// One row of readelf's table: the CFA column ("rsp+8", "rbp+16", "exp") and
// the rbp and ra columns ("c-16", "u", "exp", or absent).
struct ReadelfRow {
  uint64_t address = 0;
  std::string cfa, rbp, ra;
};

std::vector<ReadelfRow> readelfRows(const std::string& path) {
  std::vector<ReadelfRow> rows;
  std::string command = "readelf --wide --debug-dump=frames-interp " + path + " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return rows;
  std::vector<std::string> columns;
  bool in_fde = false;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe.get()) != nullptr) {
    std::string line(buffer);
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (line.find(" FDE ") != std::string::npos) {
      in_fde = true;
      columns.clear();
      continue;
    }
    if (line.find(" CIE") != std::string::npos ||
        line.find("ZERO terminator") != std::string::npos) {
      in_fde = false;
      continue;
    }
    if (!in_fde) continue;
    if (first == "LOC") {
      columns.clear();
      for (std::string column; fields >> column;) columns.push_back(column);
      continue;
    }
    if (columns.empty() || first.empty()) continue;
    ReadelfRow row;
    row.address = std::stoull(first, nullptr, 16);
    // Register columns such as "r9 (r9)" hold a space: split on the
    // fixed-width layout instead, by the header's column order.
    std::vector<std::string> values;
    for (std::string value; fields >> value;) {
      if (!values.empty() && value.front() == '(') {
        values.back() += " " + value;
        continue;
      }
      values.push_back(value);
    }
    for (size_t i = 0; i < columns.size() && i < values.size(); ++i) {
      if (columns[i] == "CFA") row.cfa = values[i];
      if (columns[i] == "rbp") row.rbp = values[i];
      if (columns[i] == "ra") row.ra = values[i];
    }
    rows.push_back(row);
  }
  return rows;
}

const CfiRow* rowAt(const CfiRows& rows, uint64_t address) {
  auto after = std::upper_bound(rows.rows.begin(), rows.rows.end(), address,
                                [](uint64_t a, const CfiRow& row) { return a < row.address; });
  if (after == rows.rows.begin()) return nullptr;
  return &*(after - 1);
}

// Every readelf row has the same rule in ours; returns how many were compared.
size_t expectAgreesWithReadelf(const std::string& path) {
  Result<UnwindTables> tables = readUnwindTables(path);
  EXPECT_TRUE(tables) << path;
  if (!tables) return 0;
  Result<CfiRows> rows = buildCfiRows(tables->eh_frame.bytes, tables->eh_frame.vaddr);
  EXPECT_TRUE(rows) << path;
  if (!rows) return 0;
  EXPECT_EQ(rows->stats.skipped_entries, 0u) << path;
  std::vector<ReadelfRow> expected = readelfRows(path);
  EXPECT_GT(expected.size(), 10u) << "readelf gave no table for " << path;
  size_t compared = 0, mismatches = 0;
  for (const ReadelfRow& want : expected) {
    const CfiRow* got = rowAt(*rows, want.address);
    if (got == nullptr) {
      ADD_FAILURE() << path << ": no row at 0x" << std::hex << want.address;
      continue;
    }
    ++compared;
    std::ostringstream where;
    where << path << " at 0x" << std::hex << want.address << ": readelf CFA " << want.cfa << " rbp "
          << want.rbp << " ra " << want.ra << "; ours cfa " << std::dec
          << static_cast<int>(got->cfa) << " offset " << got->offset << " rbp "
          << static_cast<int>(got->rbp) << " " << got->rbp_offset;
    bool ok = true;
    if (got->cfa == CfaRule::kSignalFrame) {
      ok = true;  // readelf does not show the CIE's 'S' augmentation
    } else if (want.ra == "u") {
      ok = got->cfa == CfaRule::kOutermost;
    } else if (want.ra != "c-8") {
      ok = got->cfa == CfaRule::kUnsupported;  // a return address elsewhere (longjmp, vfork)
    } else if (want.cfa.rfind("rsp+", 0) == 0) {
      ok = got->cfa == CfaRule::kRspOffset && got->offset == std::stoll(want.cfa.substr(4));
    } else if (want.cfa.rfind("rbp+", 0) == 0) {
      ok = got->cfa == CfaRule::kRbpOffset && got->offset == std::stoll(want.cfa.substr(4));
    } else if (want.cfa == "exp") {
      ok = got->cfa == CfaRule::kPlt || got->cfa == CfaRule::kDerefRsp ||
           got->cfa == CfaRule::kDerefRbp || got->cfa == CfaRule::kUnsupported;
    } else {
      ok = got->cfa == CfaRule::kUnsupported;  // CFA from another register
    }
    if (ok && (got->cfa == CfaRule::kRspOffset || got->cfa == CfaRule::kRbpOffset)) {
      if (want.rbp.empty() || want.rbp == "u") {
        ok = got->rbp == RbpRule::kUnchanged;
      } else if (want.rbp.rfind("c", 0) == 0) {
        ok = got->rbp == RbpRule::kAtCfa && got->rbp_offset == std::stoll(want.rbp.substr(1));
      }
    }
    if (!ok && ++mismatches <= 10) ADD_FAILURE() << where.str();
  }
  EXPECT_EQ(mismatches, 0u) << path;
  return compared;
}

constexpr const char* kProgram = R"(
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void* a, const void* b) { return *(const int*)a - *(const int*)b; }
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int big_frame(int n) {
  volatile char buffer[70000];
  memset((char*)buffer, n, sizeof buffer);
  return buffer[n] + leaf(n);
}
__attribute__((noinline)) int middle(int n) {
  int values[64];
  for (int i = 0; i < 64; ++i) values[i] = leaf(n + i);
  qsort(values, 64, sizeof values[0], cmp);
  return values[0] + big_frame(n & 7);
}
int main(int argc, char** argv) { printf("%d\n", middle(argc)); return 0; }
)";

TEST(CfiRows, AgreeWithReadelfOnAProgramBuiltWithoutFramePointers) {
  TempDir dir;
  std::string exe = compileC(dir, "omit", kProgram, "-O2 -fomit-frame-pointer");
  EXPECT_GT(expectAgreesWithReadelf(exe), 10u);
}

TEST(CfiRows, AgreeWithReadelfOnAProgramBuiltWithFramePointers) {
  TempDir dir;
  std::string exe = compileC(dir, "keep", kProgram, "-O2 -fno-omit-frame-pointer");
  Result<UnwindTables> tables = readUnwindTables(exe);
  ASSERT_TRUE(tables);
  Result<CfiRows> rows = buildCfiRows(tables->eh_frame.bytes, tables->eh_frame.vaddr);
  ASSERT_TRUE(rows);
  // Functions with a frame pointer switch their CFA to rbp + 16 after the prologue.
  EXPECT_TRUE(std::any_of(rows->rows.begin(), rows->rows.end(), [](const CfiRow& row) {
    return row.cfa == CfaRule::kRbpOffset && row.offset == 16 && row.rbp == RbpRule::kAtCfa &&
           row.rbp_offset == -16;
  }));
  EXPECT_GT(expectAgreesWithReadelf(exe), 10u);
}

TEST(CfiRows, AgreeWithReadelfOnTheSystemLibc) {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  if (!std::ifstream(libc)) GTEST_SKIP() << libc << " is not here";
  EXPECT_GT(expectAgreesWithReadelf(libc), 10000u);
  Result<UnwindTables> tables = readUnwindTables(libc);
  ASSERT_TRUE(tables);
  Result<CfiRows> rows = buildCfiRows(tables->eh_frame.bytes, tables->eh_frame.vaddr);
  ASSERT_TRUE(rows);
  auto count = [&](CfaRule rule) {
    return std::count_if(rows->rows.begin(), rows->rows.end(),
                         [&](const CfiRow& row) { return row.cfa == rule; });
  };
  // glibc marks clone/clone3's child and _start-like entries with an undefined
  // return address, __restore_rt as a signal frame, and its PLT by expression.
  EXPECT_GE(count(CfaRule::kOutermost), 1);
  EXPECT_GE(count(CfaRule::kSignalFrame), 1);
  EXPECT_GE(count(CfaRule::kPlt), 1);
}

TEST(CfiRows, RowsAreSortedAndNeighboursDiffer) {
  TempDir dir;
  std::string exe = compileC(dir, "omit", kProgram, "-O2 -fomit-frame-pointer");
  Result<UnwindTables> tables = readUnwindTables(exe);
  ASSERT_TRUE(tables);
  Result<CfiRows> rows = buildCfiRows(tables->eh_frame.bytes, tables->eh_frame.vaddr);
  ASSERT_TRUE(rows);
  for (size_t i = 1; i < rows->rows.size(); ++i) {
    EXPECT_LT(rows->rows[i - 1].address, rows->rows[i].address);
    EXPECT_FALSE(rows->rows[i - 1].sameRule(rows->rows[i]));
  }
  // A 70,000-byte frame: its CFA offset is past what 16 bits hold.
  EXPECT_TRUE(std::any_of(rows->rows.begin(), rows->rows.end(), [](const CfiRow& row) {
    return row.cfa == CfaRule::kRspOffset && row.offset > 70000;
  }));
}

TEST(CfiRows, MalformedSectionsAreSkippedNotReadPast) {
  TempDir dir;
  std::string exe = compileC(dir, "omit", kProgram, "-O2 -fomit-frame-pointer");
  Result<UnwindTables> tables = readUnwindTables(exe);
  ASSERT_TRUE(tables);
  const std::string good = tables->eh_frame.bytes;
  ASSERT_GT(good.size(), 64u);
  EXPECT_FALSE(buildCfiRows("", 0));
  // Every truncation and every single-byte change: no crash, rows stay sorted.
  for (size_t cut = 8; cut < good.size(); cut += 7) {
    Result<CfiRows> rows =
        buildCfiRows(std::string_view(good).substr(0, cut), tables->eh_frame.vaddr);
    if (!rows) continue;
    for (size_t i = 1; i < rows->rows.size(); ++i)
      ASSERT_LT(rows->rows[i - 1].address, rows->rows[i].address);
  }
  for (size_t at = 0; at < good.size(); at += 3) {
    for (uint8_t value : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{0x80}}) {
      std::string bad = good;
      bad[at] = static_cast<char>(value);
      Result<CfiRows> rows = buildCfiRows(bad, tables->eh_frame.vaddr);
      if (!rows) continue;
      for (size_t i = 1; i < rows->rows.size(); ++i)
        ASSERT_LT(rows->rows[i - 1].address, rows->rows[i].address);
    }
  }
}

}  // namespace
}  // namespace incise::objfile
