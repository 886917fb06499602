// cutToWindow: a summary row (block or wait summary: things the recorder
// counted over [time, end_time] instead of writing them one by one) cut by a
// report's --time window. What lies partly outside is prorated to the part
// inside: its count and summed time (and a block summary's wake-ups) scaled
// by the overlap, at least one counted, the longest kept as it is; its
// interval becomes the overlap. A window's figures are then exact to the
// resolution of the summaries (bpf/kernel_blocks.h, SUMMARY_PERIOD_NS).
//
//   format::WaitSummary cut = row;
//   if (cutToWindow(cut, trace.window())) stats.add(cut, wait);
#pragma once

#include "format/chunk.h"
#include "format/event_kinds.h"

namespace incise::analyzer {

// False when nothing of the row is inside the window (or it counts nothing).
bool cutToWindow(format::BlockSummary& row, const format::TimeWindow& window);
bool cutToWindow(format::WaitSummary& row, const format::TimeWindow& window);

}  // namespace incise::analyzer
