#include "analyzer/fleet/fleet_trace_rows.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <unordered_map>

#include "analyzer/analyses/alloc/alloc_profile.h"
#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/analyses/distributions/log2_histogram.h"
#include "analyzer/analyses/latency/latency_names.h"
#include "analyzer/analyses/latency/latency_stats.h"
#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/lock_sites.h"
#include "analyzer/analyses/locks/trace_lock_rows.h"
#include "analyzer/analyses/sched/thread_states.h"
#include "analyzer/analyses/summaries/trace_summaries.h"
#include "analyzer/archive/trace_id.h"
#include "analyzer/model/stack_namer.h"
#include "analyzer/model/time_ordered_rows.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {
namespace {

constexpr uint64_t kNsPerSecond = 1'000'000'000;

uint64_t hashOf(const void* data, size_t size, uint64_t seed = 0) {
  return XXH3_64bits_withSeed(data, size, seed);
}

uint64_t frameKey(const FleetFrame& frame) {
  std::string text = frame.name + '\0' + frame.module + '\0' + frame.build_id;
  return hashOf(text.data(), text.size());
}

std::string baseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string blockedReason(uint64_t state) {
  if (state == 1) return "S";
  if (state == 2) return "D";
  char text[32];
  std::snprintf(text, sizeof text, "state 0x%llx", static_cast<unsigned long long>(state));
  return text;
}

struct CellKey {
  uint32_t second, pid, tid;
  uint64_t stack_key;
  uint32_t values;  // the context values' index in forEachSampleCell's list
  bool operator==(const CellKey&) const = default;
};
struct CellKeyHash {
  size_t operator()(const CellKey& k) const {
    return k.stack_key ^ (uint64_t{k.second} << 40) ^ (uint64_t{k.tid} << 20) ^ k.pid ^
           (uint64_t{k.values} << 52);
  }
};

// The known values of a thread's contexts at a moment: (slot, value) pairs.
using ContextValues = std::vector<std::pair<size_t, uint64_t>>;

}  // namespace

// Names every (pid, stack id) once, by function and by module, and keys the
// result by content.
class FleetStackKeys {
 public:
  FleetStackKeys(Trace& trace, FleetTraceRows& rows)
      : functions_(trace, FrameGrouping::kFunction),
        modules_(trace, FrameGrouping::kModule),
        rows_(rows) {
    for (const auto& [object, id] : rows.facts.build_ids) build_ids_[baseName(object)] = id;
  }

  uint64_t keyOf(uint32_t pid, uint64_t stack_id, uint64_t time) {
    // Stack ids fit 32 bits in any file the writer makes; wider ones take the slow map.
    if (stack_id >> 32) {
      auto [it, inserted] = wide_keys_.try_emplace({pid, stack_id}, 0);
      if (inserted) it->second = intern(pid, stack_id, time);
      return it->second;
    }
    auto [it, inserted] = keys_.try_emplace(stack_id << 32 | pid, 0);
    if (inserted) it->second = intern(pid, stack_id, time);
    return it->second;
  }

 private:
  uint64_t intern(uint32_t pid, uint64_t stack_id, uint64_t time) {
    std::span<const NameId> names = functions_.rootFirst(pid, stack_id, time);
    std::span<const NameId> modules = modules_.rootFirst(pid, stack_id, time);
    FleetStack stack;
    if (names.empty()) {
      stack.names = {"[no stack]"};  // as StackWeights::named names it for top and diff
      stack.frame_keys = {internFrame({0, "[no stack]", "", ""})};
    }
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string& name = functions_.names().name(names[i]);
      std::string module = i < modules.size() ? modules_.names().name(modules[i]) : "[unknown]";
      auto build_id = build_ids_.find(module);
      stack.names.push_back(name);
      stack.frame_keys.push_back(
          internFrame({0, name, module, build_id == build_ids_.end() ? "" : build_id->second}));
    }
    stack.key = hashOf(stack.frame_keys.data(), stack.frame_keys.size() * sizeof(uint64_t), 1);
    uint64_t key = stack.key;
    if (known_stacks_.emplace(key, true).second) rows_.stacks.push_back(std::move(stack));
    return key;
  }

  uint64_t internFrame(FleetFrame frame) {
    frame.key = frameKey(frame);
    if (known_frames_.emplace(frame.key, true).second) rows_.frames.push_back(frame);
    return frame.key;
  }

  StackNamer functions_, modules_;
  FleetTraceRows& rows_;
  std::map<std::string, std::string> build_ids_;  // module basename -> hex build-id
  std::unordered_map<uint64_t, uint64_t> keys_;   // stack id << 32 | pid -> stack key
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> wide_keys_;
  std::unordered_map<uint64_t, bool> known_stacks_, known_frames_;
};

Result<std::unique_ptr<FleetTrace>> FleetTrace::open(const std::string& path, bool progress) {
  INCISE_ASSIGN_OR_RETURN(auto id, traceIdOfFile(path));
  TraceOptions options;
  options.progress = progress;
  INCISE_ASSIGN_OR_RETURN(auto opened, Trace::open(path, options));
  std::unique_ptr<FleetTrace> fleet(new FleetTrace());
  fleet->trace_ = std::move(opened);
  Trace& trace = *fleet->trace_;
  FleetTraceRows& rows = fleet->rows_;
  rows.trace_id = id;
  rows.facts = traceFactsOf(trace.reader());
  fleet->keys_ = std::make_unique<FleetStackKeys>(trace, rows);
  for (const format::ContextVariable& context : trace.header().options.contexts)
    fleet->context_names_.push_back(context.name);
  if (!fleet->context_names_.empty()) fleet->context_timelines_ = readContextTimelines(trace);
  FleetStackKeys& keys = *fleet->keys_;

  std::map<std::pair<uint64_t, std::string>, FleetOffCpuRow> off_cpu;
  auto add_off_cpu = [&](uint32_t pid, uint64_t stack_id, uint64_t prev_state, uint64_t time,
                         uint64_t ns, uint64_t count) {
    std::string reason = prev_state == 0 ? "preempted" : blockedReason(prev_state);
    uint64_t key = keys.keyOf(pid, stack_id, time);
    FleetOffCpuRow& row = off_cpu[{key, reason}];
    row.stack_key = key;
    row.reason = reason;
    row.ns += ns;
    row.count += count;
  };
  ThreadStateMachine machine;
  machine.on_off_cpu = [&](const OffCpuSpan& span) {
    add_off_cpu(span.pid, span.stack_id, span.prev_state, span.start, span.duration(), 1);
  };
  replaySchedule(trace, Replay::kSwitches, machine);
  // Short sleeps the recorder summarised: the replay read them as running.
  forEachBlockSummary(trace, [&](const format::BlockSummary& s) {
    add_off_cpu(static_cast<uint32_t>(s.pid), s.stack_id, s.prev_state, s.time, s.total_ns,
                s.count);
  });
  for (auto& [key, row] : off_cpu) rows.off_cpu.push_back(std::move(row));
  StackNamer namer(trace, FrameGrouping::kFunction);
  rows.alloc_sites = mergedBySite(namedAllocSites(collectAllocProfile(trace), namer));

  rows.lost = trace.losses().lost_by_source;
  fleet->lock_rows_ = trace.reader().rows(format::EventKind::kLock);
  fleet->sample_rows_ = trace.reader().rows(format::EventKind::kCpuSample);
  fleet->latency_rows_ = trace.reader().rows(format::EventKind::kLatency) +
                         trace.reader().rows(format::EventKind::kLatencyHistogram);
  return fleet;
}

void FleetTrace::forEachSampleCell(const std::function<void(const FleetSampleCell&)>& emit) {
  const uint64_t start = trace_->startTime();
  rows_.cpu_samples = 0;
  std::unordered_map<CellKey, FleetSampleCell, CellKeyHash> cells;
  std::map<ContextValues, uint32_t> value_ids;
  std::vector<const ContextValues*> values_of;  // by id
  auto valuesId = [&](uint32_t tid, uint64_t time) {
    ContextValues values;
    for (size_t slot = 0; slot < context_timelines_.size(); ++slot) {
      if (std::optional<uint64_t> value = context_timelines_[slot].valueAt(tid, time))
        values.emplace_back(slot, *value);
    }
    auto [it, added] = value_ids.try_emplace(std::move(values), values_of.size());
    if (added) values_of.push_back(&it->first);
    return it->second;
  };
  uint32_t open_second = 0;
  auto sendCells = [&] {
    for (auto& [key, cell] : cells) {
      cell.second = key.second;
      cell.pid = key.pid;
      cell.tid = key.tid;
      cell.stack_key = key.stack_key;
      for (const auto& [slot, value] : *values_of[key.values]) {
        cell.context_names.push_back(context_names_[slot]);
        cell.context_values.push_back(value);
      }
      emit(cell);
    }
    cells.clear();
  };
  // In time order, a second's cells are complete once a later second starts.
  TimeOrderedRows<format::CpuSample> samples(*trace_);
  for (const format::CpuSample* s; (s = samples.peek()) != nullptr; samples.pop()) {
    auto pid = static_cast<uint32_t>(s->pid);
    auto second = static_cast<uint32_t>((s->time > start ? s->time - start : 0) / kNsPerSecond);
    if (second != open_second) {
      sendCells();
      open_second = second;
    }
    const auto tid = static_cast<uint32_t>(s->tid);
    CellKey key{second, pid, tid, keys_->keyOf(pid, s->stack_id, s->time), valuesId(tid, s->time)};
    FleetSampleCell& cell = cells[key];
    cell.samples += 1;
    cell.weight += s->weight;
    ++rows_.cpu_samples;
  }
  sendCells();
}

FleetTrace::~FleetTrace() = default;

void FleetTrace::forEachLockRow(const std::function<void(const FleetLockRow&)>& emit) {
  const uint64_t start = trace_->startTime();
  trace_->forEachRow<format::LockInterval>([&](const format::LockInterval& lock) {
    FleetLockRow row;
    row.time_ns = lock.time > start ? lock.time - start : 0;
    row.wait_ns = lock.acquired_time > lock.time ? lock.acquired_time - lock.time : 0;
    row.hold_ns =
        lock.release_time > lock.acquired_time ? lock.release_time - lock.acquired_time : 0;
    row.pid = static_cast<uint32_t>(lock.pid);
    row.tid = static_cast<uint32_t>(lock.tid);
    row.address = lock.address;
    row.lock_kind = std::string(format::lockKindName(lock.lock_kind));
    row.flags = static_cast<uint32_t>(lock.flags);
    row.stack_key = keys_->keyOf(row.pid, lock.stack_id, lock.time);
    row.releaser_tid = static_cast<uint32_t>(lock.releaser_tid);
    emit(row);
  });
}

void FleetTrace::forEachLockSiteTime(const std::function<void(const FleetLockSiteTime&)>& emit) {
  LockSites sites(trace_->symbolizer(), trace_->stacks());
  auto send = [&](uint64_t pid, uint64_t stack_id, uint64_t time, bool hold, uint64_t ns,
                  bool inferred) {
    sites.add(pid, stack_id, time);
    uint64_t site = sites.siteOf(stack_id);
    emit({sites.name(site), sites.context(site), hold, ns, inferred});
  };
  streamLockRows(*trace_, {.acquisition =
                               [&](const Acquisition& a) {
                                 send(a.lock.pid, a.stack_id, a.time, false, a.wait_ns, false);
                               },
                           .section =
                               [&](const CriticalSection& s) {
                                 send(s.lock.pid, s.stack_id, s.start, true, s.duration(),
                                      s.inferred);
                               }});
}

// Each row counts what it counts for LatencyStatsBuilder (callsOf), so the
// pooled figures of one trace are `incise latency`'s.
void FleetTrace::forEachLatencyTime(const std::function<void(const FleetLatencyTime&)>& emit) {
  LatencyNames names(trace_->reader().metadata());
  trace_->forEachRow<format::Latency>([&](const format::Latency& row) {
    const LatencyRowCalls calls = callsOf(row);
    emit({.kind = std::string(format::latencySourceName(row.source)),
          .name = names.name(row.source, row.probe, row.detail),
          .bucket = static_cast<uint8_t>(log2Bucket(row.duration)),
          .ns = row.duration,
          .calls = calls.calls,
          .total_ns = calls.total_ns,
          .max_ns = calls.max_ns,
          .counted = false});
  });
  trace_->forEachRow<format::LatencyHistogram>([&](const format::LatencyHistogram& row) {
    if (row.bucket >= kLog2Buckets) return;
    const LatencyRowCalls calls = callsOf(row);
    emit({.kind = std::string(format::latencySourceName(row.source)),
          .name = names.name(row.source, row.probe, 0),
          .bucket = static_cast<uint8_t>(row.bucket),
          .ns = 0,
          .calls = calls.calls,
          .total_ns = calls.total_ns,
          .max_ns = calls.max_ns,
          .counted = true});
  });
}

}  // namespace incise::analyzer
