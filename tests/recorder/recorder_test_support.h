// Helpers for the recorder's integration tests (label "integration"): the
// privilege gate, running incise-record, and a small in-test view of a trace
// (every row of a kind, and user addresses symbolized with the symbol tables
// embedded in the trace — exactly what an analyzer on another machine sees).
//
//   INCISE_REQUIRE_RECORDING();   // skip without root/BPF, but fail when CI=true
//   auto run = incise::testing::run_workload(INCISE_RECORD_BIN, {"-o", path, "--", ...});
//   TraceView trace(path);
//   for (const auto& s : trace.rows<format::CpuSample>()) trace.userSymbol(s.pid, s.stack_id);
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "format/reader.h"

namespace incise::testing {

// Empty when this process can record (root and kernel BTF), else why not.
std::string recordingUnavailableReason();
bool runningInCi();

#define INCISE_REQUIRE_RECORDING()                                               \
  do {                                                                           \
    std::string why_not = ::incise::testing::recordingUnavailableReason();       \
    if (!why_not.empty()) {                                                      \
      if (::incise::testing::runningInCi()) FAIL() << "CI=true but " << why_not; \
      GTEST_SKIP() << why_not;                                                   \
    }                                                                            \
  } while (0)

// Where cgroup v2 is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified
// beside v1); empty when it is not.
std::string cgroup2Mount();

// A workload only a Go toolchain builds (tools/workloads/go_*): skip
// without it, but fail when CI=true.
#define INCISE_REQUIRE_GO_WORKLOAD(path)                                                        \
  do {                                                                                          \
    if (!std::filesystem::exists(path)) {                                                       \
      if (::incise::testing::runningInCi()) FAIL() << (path) << " not built (no Go toolchain)"; \
      GTEST_SKIP() << (path) << " not built (no Go toolchain)";                                 \
    }                                                                                           \
  } while (0)

// A fresh path under the test temp dir.
std::string tempTracePath(const std::string& name);

class TraceView {
 public:
  explicit TraceView(const std::string& path);
  bool ok() const { return reader_ != nullptr; }
  const std::string& error() const { return error_; }
  format::Reader& reader() { return *reader_; }

  template <typename Row>
  std::vector<Row> rows() const {
    std::vector<Row> out;
    for (const auto& ref : reader_->chunks(Row::kKind)) {
      auto chunk = reader_->readChunk(ref, format::ColumnSet::all());
      if (!chunk) continue;
      for (size_t i = 0; i < chunk->rows(); ++i) out.push_back(chunk->template row<Row>(i));
    }
    return out;
  }

  // Events of `source` the trace counts lost.
  uint64_t lost(format::LostSource source) const {
    uint64_t count = 0;
    for (const format::Lost& row : rows<format::Lost>())
      if (row.source == static_cast<uint64_t>(source)) count += row.count;
    return count;
  }

  // Name of the function of `address` in process `pid`, from the embedded
  // mappings and symbol tables; empty when unknown.
  std::string symbolize(uint32_t pid, uint64_t address) const;
  // The first (leaf-most) user frame of a stack, symbolized.
  std::string leafUserFunction(uint32_t pid, uint64_t stack_id) const;
  // The path of the mapping the leaf user frame is in ("[vdso]", ...); "" if none.
  std::string leafUserMapping(uint32_t pid, uint64_t stack_id) const;
  // True if any user frame of the stack symbolizes to `name`.
  bool stackHasFunction(uint32_t pid, uint64_t stack_id, const std::string& name) const;

 private:
  std::unique_ptr<format::Reader> reader_;
  std::string error_;
};

}  // namespace incise::testing
