// Grouping a chunk's rows by cpu for storage, and restoring appended order.
#include "format/row_order.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <string_view>

namespace incise::format {

std::optional<TimeAndCpu> groupingColumns(uint8_t kind) {
  if (kind != static_cast<uint8_t>(EventKind::kCpuSample)) return std::nullopt;
  return TimeAndCpu{static_cast<uint16_t>(CpuSampleColumn::time),
                    static_cast<uint16_t>(CpuSampleColumn::cpu)};
}

bool groupRowsByCpu(const SealedChunk& chunk, std::vector<std::vector<uint64_t>>& grouped) {
  std::optional<TimeAndCpu> by = groupingColumns(chunk.kind);
  if (!by || chunk.rows < 2 || by->time >= chunk.columns.size() ||
      by->cpu >= chunk.columns.size()) {
    return false;
  }
  for (size_t c = 0; c < chunk.columns.size(); ++c) {
    if (chunk.columns[c].size() != chunk.rows) return false;
    if (chunk.encodings[c] == Encoding::kBytes && c < chunk.blobs.size() &&
        !chunk.blobs[c].empty()) {
      return false;
    }
  }
  const std::vector<uint64_t>& time = chunk.columns[by->time];
  const std::vector<uint64_t>& cpu = chunk.columns[by->cpu];
  bool two_cpus = false;
  for (size_t i = 1; i < chunk.rows; ++i) {
    if (time[i] < time[i - 1] || (time[i] == time[i - 1] && cpu[i] < cpu[i - 1])) return false;
    two_cpus = two_cpus || cpu[i] != cpu[0];
  }
  if (!two_cpus) return false;
  std::vector<uint32_t> order(chunk.rows);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return cpu[a] < cpu[b]; });
  grouped.resize(chunk.columns.size());  // keeps the columns' capacity: the writer reuses them
  for (size_t c = 0; c < chunk.columns.size(); ++c) {
    grouped[c].resize(chunk.rows);
    for (size_t i = 0; i < chunk.rows; ++i) grouped[c][i] = chunk.columns[c][order[i]];
  }
  return true;
}

std::vector<uint32_t> appendedOrder(std::span<const uint64_t> time, std::span<const uint64_t> cpu) {
  // The stored rows are runs of one cpu each, in time order within a run:
  // merge the runs on a heap keyed by (time, cpu, run), O(rows x log runs).
  struct Cursor {
    size_t next;
    size_t end;
  };
  std::vector<Cursor> runs;
  for (size_t i = 0; i < time.size(); ++i) {
    if (i == 0 || cpu[i] != cpu[i - 1]) runs.push_back({i, i});
    runs.back().end = i + 1;
  }
  auto later = [&](uint32_t a, uint32_t b) {
    size_t x = runs[a].next, y = runs[b].next;
    if (time[x] != time[y]) return time[x] > time[y];
    if (cpu[x] != cpu[y]) return cpu[x] > cpu[y];
    return a > b;
  };
  std::priority_queue<uint32_t, std::vector<uint32_t>, decltype(later)> heap(later);
  for (uint32_t r = 0; r < runs.size(); ++r) heap.push(r);
  std::vector<uint32_t> order;
  order.reserve(time.size());
  while (!heap.empty()) {
    uint32_t r = heap.top();
    heap.pop();
    order.push_back(static_cast<uint32_t>(runs[r].next));
    if (++runs[r].next < runs[r].end) heap.push(r);
  }
  return order;
}

void applyOrder(std::span<const uint32_t> order, std::vector<uint64_t>& column) {
  if (column.size() != order.size()) return;
  std::vector<uint64_t> reordered(column.size());
  for (size_t i = 0; i < order.size(); ++i) reordered[i] = column[order[i]];
  column.swap(reordered);
}

}  // namespace incise::format
