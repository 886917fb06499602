// Counters declared as one list: each has a name, a severity and a
// description, so a report can print what was lost or degraded without a
// hand-written line per counter (Perfetto's stats table, as an X-macro).
//
//   #define MY_COUNTERS(X) X(lookups, kInfo, "addresses looked up") X(misses, kDataLoss, "...")
//   struct MyCounters { INCISE_COUNTER_FIELDS(MY_COUNTERS) INCISE_COUNTER_VISITOR(MY_COUNTERS) };
//   counters.forEach([](std::string_view name, CounterSeverity severity,
//                       std::string_view description, uint64_t value) { ... });
#pragma once

#include <cstdint>
#include <string_view>

namespace incise {

// kDataLoss: a non-zero value means figures are missing or wrong somewhere;
// reports warn. kInfo: how the work went.
enum class CounterSeverity : uint8_t { kInfo, kDataLoss };

}  // namespace incise

#define INCISE_COUNTER_FIELD_(name, severity, description) uint64_t name = 0;
#define INCISE_COUNTER_VISIT_(name, severity, description)            \
  visit(std::string_view(#name), ::incise::CounterSeverity::severity, \
        std::string_view(description), name);
#define INCISE_COUNTER_ADD_(name, severity, description) name += other.name;

// The fields (uint64_t, zero) of a counters list.
#define INCISE_COUNTER_FIELDS(LIST) LIST(INCISE_COUNTER_FIELD_)
// forEach(visit) over a counters list, in declaration order; and += of two.
#define INCISE_COUNTER_VISITOR(LIST, Self)                                          \
  template <typename Visit>                                                         \
  void forEach(Visit&& visit) const {LIST(INCISE_COUNTER_VISIT_)} Self& operator+=( \
      const Self& other) {                                                          \
    LIST(INCISE_COUNTER_ADD_)                                                       \
    return *this;                                                                   \
  }
