// What `incise check` demands of a trace, as a test helper: the reader opens
// it (salvaging if needed), and every event and stack chunk decodes.
//
//   TraceCheck check = checkTrace(path);
//   ASSERT_TRUE(check.problem.empty()) << check.problem;
//   EXPECT_GT(check.rows[format::EventKind::kCpuSample], 0u);
#pragma once

#include <algorithm>
#include <map>
#include <string>

#include "format/reader.h"

namespace incise::testing {

struct TraceCheck {
  std::string problem;  // empty when the trace passes
  bool used_footer = false;
  std::map<format::EventKind, uint64_t> rows;
  uint64_t last_sample_time = 0;
  uint64_t lost_events = 0;  // sum of Lost rows' counts
  uint64_t start_mono_ns = 0;
};

inline TraceCheck checkTrace(const std::string& path) {
  TraceCheck check;
  auto reader = format::Reader::open(path);
  if (!reader) {
    check.problem = reader.error().message();
    return check;
  }
  const format::Reader& r = **reader;
  check.used_footer = r.recovery().used_footer;
  check.start_mono_ns = r.header().start_mono_ns;
  for (const format::ChunkRef& ref : r.blocks()) {
    if (ref.block_type != format::BlockType::kEventChunk &&
        ref.block_type != format::BlockType::kStackChunk) {
      continue;
    }
    Result<format::Chunk> chunk = r.readChunk(ref, format::ColumnSet::all());
    if (!chunk) {
      check.problem = chunk.error().message();
      return check;
    }
    if (ref.block_type == format::BlockType::kStackChunk) continue;
    check.rows[ref.kind] += chunk->rows();
    for (size_t i = 0; i < chunk->rows(); ++i) {
      if (ref.kind == format::EventKind::kCpuSample) {
        check.last_sample_time =
            std::max(check.last_sample_time, chunk->row<format::CpuSample>(i).time);
      } else if (ref.kind == format::EventKind::kLost) {
        check.lost_events += chunk->row<format::Lost>(i).count;
      }
    }
  }
  return check;
}

}  // namespace incise::testing
