#include "analyzer/analyses/locks/trace_lock_rows.h"

#include "analyzer/model/time_merge.h"
#include "analyzer/model/time_ordered_rows.h"

namespace incise::analyzer {

LockRowCounts streamLockRows(Trace& trace, LockRowSinks sinks, const LockRowAdmit& admit) {
  LockRowStream stream(std::move(sinks));
  TimeOrderedRows<format::LockInterval> rows(trace);
  TimeOrderedRows<format::LockRelease> releases(trace, /*progress=*/false);
  // Ties: a lock row first, so a lockSlow entered at a release's time is in
  // its episode.
  mergeByTime([&](uint64_t now) { stream.settleBefore(now); },
              timeStream(rows,
                         [&](const format::LockInterval& row) {
                           if (!admit) {
                             stream.add(row);
                             return;
                           }
                           format::LockInterval admitted = row;
                           if (admit(admitted)) stream.add(admitted);
                         }),
              timeStream(releases, [&](const format::LockRelease& row) { stream.add(row); }));
  return stream.finish();
}

}  // namespace incise::analyzer
