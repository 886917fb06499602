#include "analyzer/reports/trace_lock_timeline.h"

#include "analyzer/model/time_ordered_rows.h"

namespace incise::analyzer {

LockTimeline readLockTimeline(Trace& trace, bool keep_acquisitions) {
  LockTimelineBuilder builder(keep_acquisitions);
  TimeOrderedRows<format::LockInterval> rows(trace);
  for (const format::LockInterval* row; (row = rows.peek()) != nullptr; rows.pop()) {
    builder.add(*row);
  }
  return builder.finish();
}

}  // namespace incise::analyzer
