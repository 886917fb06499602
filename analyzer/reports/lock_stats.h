// Per-lock and per-acquire-site statistics for `incise locks`.
//
// Groups a LockTimeline by lock (pid, address) or by acquire site, and
// computes per group: acquisitions, contended share, the wait and hold
// distributions (nearest-rank p50/p90/p99 and max), the threads that waited
// and held longest, and a log2 histogram of hold times. Waits are
// request -> acquired for every acquisition (mode `all`), or the futex waits
// themselves (mode `contended`); holds come from critical sections, which
// are inferred in contended mode (LockGroupStats::hold_inferred).
//
// A site is whatever the caller says a stack id maps to (e.g. the first user
// frame outside libc): `site_of` turns an acquire stack id into a site id.
//
//   LockTimeline timeline = buildLockTimeline(rows);
//   auto groups = computeLockStats(timeline, LockGrouping::kByLock, {}, /*top_threads=*/3);
//   for (const LockGroupStats& g : groups) print(g.lock.address, g.hold.p99);
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "analyzer/reports/critical_sections.h"

namespace incise::analyzer {

struct Distribution {
  uint64_t count = 0;
  uint64_t total = 0;
  uint64_t p50 = 0;
  uint64_t p90 = 0;
  uint64_t p99 = 0;
  uint64_t max = 0;
};

// Nearest-rank percentiles (the smallest value with at least p% of values at
// or below it); sorts `values`.
Distribution distributionOf(std::vector<uint64_t>& values);

// Bucket i holds values v with floor(log2(v)) == i; 0 falls in bucket 0.
inline constexpr size_t kLog2Buckets = 64;
using Log2Histogram = std::array<uint64_t, kLog2Buckets>;
size_t log2Bucket(uint64_t value);

struct ThreadTime {
  uint64_t pid = 0;
  uint64_t tid = 0;
  uint64_t count = 0;
  uint64_t ns = 0;
};

enum class LockGrouping { kByLock, kBySite };

using SiteOf = std::function<uint64_t(uint64_t stack_id)>;

struct LockGroupStats {
  LockId lock;                 // kByLock: the lock; kBySite: the lock most acquired at the site
  uint64_t site = 0;           // kBySite: the site; kByLock: the site acquiring it most
  uint64_t site_stack_id = 0;  // a stack of that site, for naming it
  uint64_t locks = 0;          // distinct locks in the group
  uint64_t kind = 0;           // format::LockKind of the first acquisition
  uint64_t acquisitions = 0;
  uint64_t contended = 0;
  Distribution wait;
  Distribution hold;
  bool hold_inferred = false;           // some holds are inferred (contended mode)
  std::vector<ThreadTime> top_waiters;  // by wait ns, longest first
  std::vector<ThreadTime> top_holders;  // by hold ns, longest first
  Log2Histogram hold_histogram{};
};

// Groups sorted by total wait, then total hold, longest first. An empty
// `site_of` uses the stack id as the site.
std::vector<LockGroupStats> computeLockStats(const LockTimeline& timeline, LockGrouping grouping,
                                             const SiteOf& site_of, size_t top_threads);

}  // namespace incise::analyzer
