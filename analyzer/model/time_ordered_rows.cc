#include "analyzer/model/time_ordered_rows.h"

#include <numeric>

#include "analyzer/model/progress.h"

namespace incise::analyzer {
namespace {

// Streams that read more rows than this show a progress bar (if slow enough)
// and decode a chunk ahead on another thread: below it, handing each chunk
// over costs more wall time on a busy box than decoding it here.
constexpr uint64_t kBigStreamRows = 1u << 20;

}  // namespace

TimeOrderedChunks::TimeOrderedChunks(Trace& trace, format::EventKind kind, bool progress,
                                     LookAhead look_ahead, RowScope scope, format::ColumnSet wanted)
    : trace_(trace),
      kind_(kind),
      scope_(scope),
      columns_(trace.decodedColumns(kind, wanted)),
      unwind_(trace.unwinds(kind, wanted)) {
  std::vector<format::ChunkRef> in_file_order = trace.reader().chunks(
      kind, scope == RowScope::kAll ? format::TimeWindow{0, UINT64_MAX} : trace.window());
  std::vector<size_t> order(in_file_order.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return in_file_order[a].min_time < in_file_order[b].min_time;
  });
  uint64_t total_rows = 0;
  for (size_t i : order) {
    refs_.push_back(in_file_order[i]);
    file_order_.push_back(i);
    total_rows += in_file_order[i].rows;
  }
  look_ahead_ = trace.options().threads != 1 &&
                (look_ahead == LookAhead::kAlways ||
                 (look_ahead == LookAhead::kBigStreams && total_rows >= kBigStreamRows));
  progress_ = std::make_unique<ProgressBar>(
      "reading " + std::string(format::kindName(kind)), total_rows,
      progress && trace.options().progress && total_rows >= kBigStreamRows);
}

TimeOrderedChunks::~TimeOrderedChunks() {
  if (ahead_.valid()) ahead_.wait();
}

TimeOrderedChunks::Decoded TimeOrderedChunks::decode(size_t index) const {
  Decoded decoded;
  decoded.chunk = trace_.reader().readChunk(refs_[index], columns_);
  decoded.file_order = file_order_[index];
  if (decoded.chunk && unwind_) {
    // Filtered-out samples are not unwound; passes() only reads.
    decoded.unwound = trace_.unwound_->unwindChunk(*decoded.chunk, 0, [this](const auto& row) {
      return scope_ == RowScope::kAll || trace_.passes(row);
    });
  }
  return decoded;
}

TimeOrderedChunks::Decoded TimeOrderedChunks::decodeNext() {
  Decoded decoded = ahead_.valid() ? ahead_.get() : decode(next_);
  progress_->advance(refs_[next_].rows);
  ++next_;
  if (look_ahead_ && next_ < refs_.size()) {
    ahead_ = std::async(std::launch::async, [this, index = next_] { return decode(index); });
  }
  if (!decoded.chunk) ++trace_.damaged_chunks_;
  return decoded;
}

}  // namespace incise::analyzer
