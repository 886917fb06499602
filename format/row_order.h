// Row order inside a cpu_sample chunk (format 2.0): rows stored grouped by
// cpu, read back in the order they were appended.
//
// Samples of two cpus interleave in time, so stored as appended a chunk's
// time column steps back and forth between the cpus' ticks and its cpu
// column flips on almost every row. Grouped by cpu (ClickHouse's ORDER BY
// for a part), each cpu's times are one period apart and the cpu, tid and
// stack columns come in runs, which the codecs and zstd store in fewer bytes.
// The writer groups a chunk only when its rows were appended in (time, cpu)
// order, so ordering the stored rows by (time, cpu) again, stably, gives
// back exactly the appended order: every reader still sees rows as they
// were written. ChunkHeader.rowOrder says which order a chunk holds.
//
//   std::vector<std::vector<uint64_t>> grouped;
//   if (groupRowsByCpu(sealed, grouped)) store(grouped, RowOrder::kGroupedByCpu);
//   ...
//   std::vector<uint32_t> order = appendedOrder(time_column, cpu_column);
//   for (auto& column : decoded) applyOrder(order, column);
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "format/chunk_codec.h"
#include "format/event_kinds.h"

namespace incise::format {

// ChunkHeader.rowOrder. Frozen on disk.
enum class RowOrder : uint8_t {
  kAppended = 0,      // as the writer received them (every chunk before 2.0)
  kGroupedByCpu = 1,  // stably by cpu; rows of one cpu in appended order
};

struct TimeAndCpu {
  uint16_t time = 0;
  uint16_t cpu = 0;
};
// The columns a kind's rows are grouped by, for the kinds whose chunks are
// grouped (cpu samples); nothing for the others.
std::optional<TimeAndCpu> groupingColumns(uint8_t kind);

// Fills `grouped` with the chunk's columns grouped by cpu and returns true
// when that is both reversible and useful: the rows were appended in
// (time, cpu) order, there are two cpus or more, and no byte-blob column
// holds bytes (blobs would have to move too).
bool groupRowsByCpu(const SealedChunk& chunk, std::vector<std::vector<uint64_t>>& grouped);

// For stored rows grouped by cpu: the stored index of each row in appended
// order, i.e. the stored rows ordered by (time, cpu), ties kept in stored
// order. Any input gives a permutation (a crafted chunk only comes out in
// another order). `time` and `cpu` must have the same size.
std::vector<uint32_t> appendedOrder(std::span<const uint64_t> time, std::span<const uint64_t> cpu);

// column[i] = old column[order[i]]; a column of another size is left alone
// (a column the caller did not decode is empty).
void applyOrder(std::span<const uint32_t> order, std::vector<uint64_t>& column);

}  // namespace incise::format
