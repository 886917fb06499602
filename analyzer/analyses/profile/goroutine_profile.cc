#include "analyzer/analyses/profile/goroutine_profile.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "analyzer/analyses/profile/stack_weights.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/table.h"

namespace incise::analyzer {

GoroutineProfile computeGoroutineProfile(Trace& trace, FrameGrouping grouping) {
  std::map<std::pair<uint64_t, uint64_t>, StackWeights> by_goroutine;  // (pid, goid)
  using C = format::CpuSampleColumn;
  trace.forEachRow<format::CpuSample>(
      [&](const format::CpuSample& sample) {
        by_goroutine[{sample.pid, sample.goid}].add(static_cast<uint32_t>(sample.pid),
                                                    sample.stack_id, sample.time, 1);
      },
      {C::pid, C::goid, C::stack_id, C::time});
  StackNamer namer(trace, grouping);
  GoroutineProfile result;
  for (auto& [key, weights] : by_goroutine) {
    GoroutineRow row{.pid = key.first, .goid = key.second};
    row.profile = computeFlatProfile(weights.named(namer));
    row.samples = row.profile.weight;
    result.samples += row.samples;
    result.rows.push_back(std::move(row));
  }
  for (GoroutineRow& row : result.rows) row.percent = percentOf(row.samples, result.samples);
  std::stable_sort(result.rows.begin(), result.rows.end(),
                   [](const GoroutineRow& a, const GoroutineRow& b) {
                     return std::tie(b.samples, a.pid, a.goid) < std::tie(a.samples, b.pid, b.goid);
                   });
  return result;
}

}  // namespace incise::analyzer
