// LossSummary: how complete a trace's figures are.
//
// Counts what the kernel or the recorder dropped (the Lost rows, per source),
// what the file holds per event kind, what a report actually used after its
// filters, and chunks that failed to decode. Every report header prints it;
// when more than 1% of events were lost the header warns that figures may be
// low.
//
//   LossSummary losses = trace.losses();
//   if (losses.significant()) std::cout << "warning: ...";
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace incise::analyzer {

struct LossSummary {
  std::map<std::string, uint64_t> lost_by_source;  // lostSourceName -> events dropped
  std::map<std::string, uint64_t> rows_by_kind;    // kindName -> rows in the file
  std::map<std::string, uint64_t> used_by_kind;    // kindName -> rows that passed the filters
  uint64_t damaged_chunks = 0;                     // chunks that failed to decode (skipped)
  bool salvaged = false;                           // the file was recovered by scanning

  uint64_t lost() const;
  uint64_t rows() const;  // events in the file, Lost rows excluded
  uint64_t used() const;
  // Lost events as a percentage of what the kernel produced (kept + lost).
  double percentLost() const;
  bool significant() const { return percentLost() > 1.0 || damaged_chunks != 0; }
};

}  // namespace incise::analyzer
