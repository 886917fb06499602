#include "analyzer/analyses/profile/sample_groups.h"

#include <algorithm>
#include <functional>
#include <map>

#include "analyzer/analyses/profile/stack_weights.h"
#include "analyzer/model/trace.h"
#include "analyzer/render/table.h"

namespace incise::analyzer {
namespace {

using KeyOf = std::function<SampleGroupKey(const format::CpuSample&)>;

SampleGroups computeGroups(Trace& trace, FrameGrouping grouping, format::ColumnSet key_columns,
                           const KeyOf& key_of) {
  std::map<SampleGroupKey, StackWeights> by_key;
  using C = format::CpuSampleColumn;
  trace.forEachRow<format::CpuSample>(
      [&](const format::CpuSample& sample) {
        by_key[key_of(sample)].add(static_cast<uint32_t>(sample.pid), sample.stack_id, sample.time,
                                   1);
      },
      key_columns | format::ColumnSet{C::pid, C::stack_id, C::time});
  StackNamer namer(trace, grouping);
  SampleGroups result;
  for (auto& [key, weights] : by_key) {
    SampleGroup group{.key = key};
    group.profile = computeFlatProfile(weights.named(namer));
    group.samples = group.profile.weight;
    result.samples += group.samples;
    result.groups.push_back(std::move(group));
  }
  for (SampleGroup& group : result.groups) group.percent = percentOf(group.samples, result.samples);
  std::stable_sort(result.groups.begin(), result.groups.end(),
                   [](const SampleGroup& a, const SampleGroup& b) {
                     if (a.samples != b.samples) return a.samples > b.samples;
                     return a.key < b.key;
                   });
  return result;
}

}  // namespace

SampleGroups computeGoroutineGroups(Trace& trace, FrameGrouping grouping) {
  using C = format::CpuSampleColumn;
  return computeGroups(trace, grouping, {C::goid}, [](const format::CpuSample& sample) {
    return goroutineKey(sample.pid, sample.goid);
  });
}

SampleGroups computeContextGroups(Trace& trace, const ContextTimeline& timeline,
                                  FrameGrouping grouping) {
  using C = format::CpuSampleColumn;
  return computeGroups(trace, grouping, {C::tid}, [&](const format::CpuSample& sample) {
    return contextKey(timeline.valueAt(static_cast<uint32_t>(sample.tid), sample.time));
  });
}

}  // namespace incise::analyzer
