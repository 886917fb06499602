// Locks through libincise-preload.so: the lock calls of a command the
// recorder starts with `--locks all`, drained from the library's per-thread
// rings (recorder/preload_rings.h) into the lock rows the uprobes of
// recorder/sources/lock_source.h write for `-p` targets
// (recorder/sources/preload_sections.h makes them). No BPF program of its
// own: the scheduler source's futex waits that fall inside a call are
// claimed from the event sink and joined to their call. A thread of its own
// empties the rings every millisecond (recorder/sources/preload_ring_reader.h);
// the poll loop turns what it read into rows every 5 ms. A thread's ring
// holds 32,768 records, 150 ms of the futex storm's busiest thread (220,000
// records a second); a full ring counts its records lost
// (format::LostSource::kLocks).
//
//   if (preload && config.lock_mode == LockMode::kAll)
//     sources.push_back(makePreloadLockSource(preload));
#pragma once

#include <memory>

#include "recorder/preload_rings.h"
#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makePreloadLockSource(std::shared_ptr<PreloadRings> rings);

}  // namespace incise::recorder
