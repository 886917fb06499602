// A wait summary (format::WaitSummary: short condvar and semaphore waits
// the recorder counted instead of writing) as the lock row its waits share:
// what the wait classifier and the site table read (the futex word, its
// object, the stacks, the waker), spanning the summary's first start to its
// last end. Its times say nothing of one wait: the summary's count, total_ns
// and max_ns do (WaitStatsBuilder::add(summary, ...)).
//
//   format::LockInterval shared = waitRowOf(summary);
//   WaitClass wait = classifier.classify(shared);
//   stats.add(summary, wait);
#pragma once

#include "format/event_kinds.h"

namespace incise::analyzer {

format::LockInterval waitRowOf(const format::WaitSummary& summary);

}  // namespace incise::analyzer
