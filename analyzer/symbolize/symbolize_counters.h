// What the symbolizer could not do, counted so reports can say so.
//
// One X-macro list: each counter has a name, a severity and a description,
// and reports print the non-zero ones (data-loss counters first).
//
//   symbolizer.counters().forEach([](auto name, CounterSeverity severity, auto description,
//                                    uint64_t value) {
//     if (value && severity == CounterSeverity::kDataLoss) warn(name, value, description);
//   });
#pragma once

#include <cstdint>
#include <string_view>

#include "base/counters.h"

namespace incise::analyzer {

#define INCISE_SYMBOLIZE_COUNTERS(X)                                                          \
  X(lookups, kInfo, "addresses symbolized, repeats included")                                 \
  X(cache_misses, kInfo, "addresses resolved without the address cache")                      \
  X(unsymbolized_frames, kDataLoss, "frames left without a function name (module+offset)")    \
  X(missing_objects, kDataLoss,                                                               \
    "objects with no symbol table: not embedded, local, or debuginfod")                       \
  X(refused_paths, kDataLoss, "trace paths not followed because they could escape --symfs")   \
  X(build_id_mismatches, kInfo, "local files skipped: their build-id differs from the trace") \
  X(mapping_time_fallbacks, kInfo, "addresses whose mapping was first seen after the sample") \
  X(debuginfod_fetches, kInfo, "objects fetched through debuginfod")

struct SymbolizeCounters {
  INCISE_COUNTER_FIELDS(INCISE_SYMBOLIZE_COUNTERS)
  INCISE_COUNTER_VISITOR(INCISE_SYMBOLIZE_COUNTERS, SymbolizeCounters)
};

}  // namespace incise::analyzer
