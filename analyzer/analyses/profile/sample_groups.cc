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

// Two passes: the samples per key, then the stacks of the groups kept only
// (a context may have a value per request: millions of groups).
SampleGroups computeGroups(Trace& trace, FrameGrouping grouping, size_t limit,
                           format::ColumnSet key_columns, const KeyOf& key_of) {
  using C = format::CpuSampleColumn;
  std::map<SampleGroupKey, uint64_t> samples_by_key;
  trace.forEachRow<format::CpuSample>(
      [&](const format::CpuSample& sample) { ++samples_by_key[key_of(sample)]; },
      key_columns | format::ColumnSet{C::time});
  SampleGroups result;
  result.total_groups = samples_by_key.size();
  std::vector<std::pair<SampleGroupKey, uint64_t>> ranked(samples_by_key.begin(),
                                                          samples_by_key.end());
  for (const auto& [key, samples] : ranked) result.samples += samples;
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (limit != 0 && ranked.size() > limit) ranked.resize(limit);

  std::map<SampleGroupKey, StackWeights> kept;
  for (const auto& [key, samples] : ranked) kept[key];
  trace.forEachRow<format::CpuSample>(
      [&](const format::CpuSample& sample) {
        auto group = kept.find(key_of(sample));
        if (group != kept.end())
          group->second.add(static_cast<uint32_t>(sample.pid), sample.stack_id, sample.time, 1);
      },
      key_columns | format::ColumnSet{C::pid, C::stack_id, C::time});
  StackNamer namer(trace, grouping);
  for (const auto& [key, samples] : ranked) {
    SampleGroup group{.key = key, .samples = samples};
    group.percent = percentOf(samples, result.samples);
    group.profile = computeFlatProfile(kept[key].named(namer));
    result.groups.push_back(std::move(group));
  }
  return result;
}

}  // namespace

SampleGroups computeGoroutineGroups(Trace& trace, FrameGrouping grouping, size_t limit) {
  using C = format::CpuSampleColumn;
  return computeGroups(
      trace, grouping, limit, {C::pid, C::goid},
      [](const format::CpuSample& sample) { return goroutineKey(sample.pid, sample.goid); });
}

SampleGroups computeContextGroups(Trace& trace, const ContextTimeline& timeline,
                                  FrameGrouping grouping, size_t limit) {
  using C = format::CpuSampleColumn;
  return computeGroups(trace, grouping, limit, {C::tid}, [&](const format::CpuSample& sample) {
    return contextKey(timeline.valueAt(static_cast<uint32_t>(sample.tid), sample.time));
  });
}

}  // namespace incise::analyzer
