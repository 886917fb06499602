#include "analyzer/export/pprof_export.h"

#include <sys/mman.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analyzer/analyses/alloc/alloc_profile.h"
#include "analyzer/analyses/context/trace_context_timelines.h"
#include "analyzer/diff/trace_facts.h"
#include "analyzer/export/gzip.h"
#include "analyzer/symbolize/stack_frames.h"
#include "analyzer/symbolize/symbolizer.h"
#include "base/hex.h"

namespace incise::analyzer {
namespace {

namespace pb = perftools::profiles;

class StringTable {
 public:
  explicit StringTable(pb::Profile& profile) : profile_(profile) { index(""); }
  int64_t index(const std::string& text) {
    auto [it, inserted] = indexes_.try_emplace(text, static_cast<int64_t>(indexes_.size()));
    if (inserted) profile_.add_string_table(text);
    return it->second;
  }

 private:
  pb::Profile& profile_;
  std::unordered_map<std::string, int64_t> indexes_;
};

// The mappings of each process, to find the one holding an address. A range
// read again (a re-read of /proc/PID/maps) or shared by forked processes is
// one pprof mapping.
class MappingIndex {
 public:
  MappingIndex(const format::Metadata& metadata, pb::Profile& profile, StringTable& strings)
      : metadata_(metadata), profile_(profile), strings_(strings) {
    for (const format::Mapping& m : metadata.mappings) by_pid_[m.pid].push_back(&m);
    for (auto& [pid, list] : by_pid_) {
      // Later records for the same range win: stable sort by start keeps file order.
      std::stable_sort(list.begin(), list.end(),
                       [](const auto* a, const auto* b) { return a->start < b->start; });
    }
  }

  // pprof mapping id for `address` in `pid`; 0 when none holds it.
  uint64_t idFor(uint32_t pid, uint64_t address) {
    auto found = by_pid_.find(pid);
    if (found == by_pid_.end()) return 0;
    const format::Mapping* hit = nullptr;
    for (const format::Mapping* m : found->second) {
      if (m->start > address) break;
      if (address < m->end) hit = m;
    }
    return hit ? idOf(*hit) : 0;
  }

  // pprof readers take the first mapping for the main binary ("File:" in
  // `go tool pprof`). Moves `pid`'s executable there: the code mapping of
  // the image the process ran at `time`. The kernel maps that image during
  // the exec, before the exec is reported, so a mapping's time does not
  // tell the image apart from the one before (the `env` or shell that
  // exec'd it); its name does: after an exec the thread's name is the
  // file's (15 characters of it). The newest such mapping is the one; a
  // process that renamed itself gets its lowest code mapping since the exec.
  void putExecutableFirst(uint32_t pid, uint64_t time) {
    auto found = by_pid_.find(pid);
    if (found == by_pid_.end()) return;
    const format::Process* exec = nullptr;
    for (const format::Process& process : metadata_.processes) {
      if (process.pid == pid && process.time <= time && (!exec || process.time >= exec->time))
        exec = &process;
    }
    const format::Mapping* named = nullptr;
    const format::Mapping* lowest = nullptr;
    for (const format::Mapping* m : found->second) {
      if (m->path.empty() || m->path.front() != '/') continue;
      // Its code: the mapping the samples' locations are in.
      if (m->prot != 0 && (m->prot & PROT_EXEC) == 0) continue;
      const std::string_view file = std::string_view(m->path).substr(m->path.rfind('/') + 1);
      if (exec && !exec->comm.empty() && file.substr(0, 15) == exec->comm && m->time <= time &&
          (!named || m->time > named->time)) {
        named = m;
      }
      if (exec && m->time < exec->time) continue;
      if (!lowest || m->start < lowest->start) lowest = m;
    }
    const format::Mapping* executable = named ? named : lowest;
    if (!executable) return;
    const uint64_t id = idOf(*executable);
    const auto position = std::find_if(profile_.mapping().begin(), profile_.mapping().end(),
                                       [&](const pb::Mapping& x) { return x.id() == id; });
    const int index = static_cast<int>(position - profile_.mapping().begin());
    // Rotate rather than swap, so the others keep their order.
    for (int i = index; i > 0; --i) profile_.mutable_mapping()->SwapElements(i, i - 1);
  }

  // A mapping whose every location pprof may name itself (from the binary)
  // says so; one where incise named them all says has_functions.
  void noteUnnamed(uint64_t id) { unnamed_.insert(id); }
  void finish() {
    for (pb::Mapping& mapping : *profile_.mutable_mapping())
      mapping.set_has_functions(unnamed_.count(mapping.id()) == 0);
  }

 private:
  using RangeKey = std::tuple<uint64_t, uint64_t, uint64_t, std::string, std::string>;

  uint64_t idOf(const format::Mapping& hit) {
    RangeKey key{hit.start, hit.end, hit.file_offset, hit.path, hit.build_id};
    auto [it, inserted] = ids_.try_emplace(std::move(key), profile_.mapping_size() + 1);
    if (inserted) {
      pb::Mapping* mapping = profile_.add_mapping();
      mapping->set_id(it->second);
      mapping->set_memory_start(hit.start);
      mapping->set_memory_limit(hit.end);
      mapping->set_file_offset(hit.file_offset);
      mapping->set_filename(strings_.index(hit.path));
      mapping->set_build_id(strings_.index(hexBytes(hit.build_id)));
    }
    return it->second;
  }

  const format::Metadata& metadata_;
  pb::Profile& profile_;
  StringTable& strings_;
  std::unordered_map<uint32_t, std::vector<const format::Mapping*>> by_pid_;
  std::map<RangeKey, uint64_t> ids_;
  std::unordered_set<uint64_t> unnamed_;
};

// The samples of a profile, each a stack of one process and its values:
// locations per (pid, looked-up address), functions per (name, module),
// and the mappings they fall in. A return address is stored as the call's
// address (return address - 1), what pprof's own symbolizer expects of a
// caller's pc.
class PprofSamples {
 public:
  PprofSamples(Trace& trace, pb::Profile& profile, StringTable& strings)
      : trace_(trace),
        profile_(profile),
        strings_(strings),
        mappings_(trace.reader().metadata(), profile, strings) {}

  pb::Sample* add(uint32_t pid, uint64_t stack_id, uint64_t first_time,
                  std::initializer_list<uint64_t> values) {
    pb::Sample* sample = profile_.add_sample();
    stackFrames(trace_.symbolizer(), pid, trace_.stacks().frames(stack_id), first_time, frames_);
    for (const StackFrame& frame : frames_) sample->add_location_id(locationFor(pid, frame));
    for (uint64_t value : values) sample->add_value(static_cast<int64_t>(value));
    auto [at, inserted] = per_pid_.try_emplace(pid, PidWeight{0, first_time});
    at->second.samples += values.size() ? *values.begin() : 0;
    at->second.first_time = std::min(at->second.first_time, first_time);
    return sample;
  }

  // The busiest process's executable first (pprof's "File:"): the one
  // whose samples' first values (CPU samples, allocations) add up to most.
  // Then which mappings pprof must name itself.
  void finish() {
    const auto busiest =
        std::max_element(per_pid_.begin(), per_pid_.end(), [](const auto& a, const auto& b) {
          return std::tie(a.second.samples, b.first) < std::tie(b.second.samples, a.first);
        });
    if (busiest != per_pid_.end())
      mappings_.putExecutableFirst(busiest->first, busiest->second.first_time);
    mappings_.finish();
  }

 private:
  struct PidWeight {
    uint64_t samples, first_time;
  };

  uint64_t locationFor(uint32_t pid, const StackFrame& stack_frame) {
    auto [it, inserted] =
        locations_.try_emplace({pid, stack_frame.address}, profile_.location_size() + 1);
    if (!inserted) return it->second;
    const Frame& frame = *stack_frame.frame;
    pb::Location* location = profile_.add_location();
    location->set_id(it->second);
    location->set_address(stack_frame.address);
    uint64_t mapping_id = 0;
    if (!format::isKernelAddress(stack_frame.address)) {
      mapping_id = mappings_.idFor(pid, stack_frame.address);
      location->set_mapping_id(mapping_id);
    }
    // An unnamed frame in a mapping gets no line: pprof then names it
    // itself from the binary (by build-id or path), which a placeholder
    // name ("libc.so.6+0x16db75") would stop.
    if (!frame.known() && mapping_id != 0) {
      mappings_.noteUnnamed(mapping_id);
      return it->second;
    }
    // Lines exist where a local debug file or binary has DWARF line tables.
    const std::optional<SourceLine> source = trace_.symbolizer().sourceLine(frame);
    auto [fn, new_function] =
        functions_.try_emplace({frame.name, frame.module}, profile_.function_size() + 1);
    if (new_function) {
      pb::Function* function = profile_.add_function();
      function->set_id(fn->second);
      function->set_name(strings_.index(frame.name));
      function->set_system_name(
          strings_.index(frame.function.empty() ? frame.name : frame.function));
      // A source file, or nothing: the module is the mapping's, not a file to list.
      function->set_filename(strings_.index(source ? source->file : std::string()));
    }
    pb::Line* line = location->add_line();
    line->set_function_id(fn->second);
    if (source) line->set_line(source->line);
    return it->second;
  }

  Trace& trace_;
  pb::Profile& profile_;
  StringTable& strings_;
  MappingIndex mappings_;
  std::vector<StackFrame> frames_;
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> locations_;
  std::map<std::pair<std::string, std::string>, uint64_t> functions_;  // (name, module)
  std::unordered_map<uint32_t, PidWeight> per_pid_;
};

void addNumberLabel(pb::Sample& sample, int64_t key, uint64_t value) {
  pb::Label* label = sample.add_label();
  label->set_key(key);
  label->set_num(static_cast<int64_t>(value));
}

pb::ValueType* addSampleType(pb::Profile& profile, StringTable& strings, const std::string& type,
                             const std::string& unit) {
  pb::ValueType* value_type = profile.add_sample_type();
  value_type->set_type(strings.index(type));
  value_type->set_unit(strings.index(unit));
  return value_type;
}

void setTimes(pb::Profile& profile, Trace& trace) {
  profile.set_time_nanos(static_cast<int64_t>(trace.header().start_wall_ns));
  profile.set_duration_nanos(static_cast<int64_t>(trace.durationNs()));
}

struct SampleKey {
  uint64_t pid, tid, stack_id, goid;  // goid: Go programs' goroutine; 0 = none
  // The value of each context (by slot) the thread held; nullopt: unknown.
  std::vector<std::optional<uint64_t>> contexts;
  bool operator<(const SampleKey& o) const {
    return std::tie(pid, tid, stack_id, goid, contexts) <
           std::tie(o.pid, o.tid, o.stack_id, o.goid, o.contexts);
  }
};
struct SampleTotal {
  uint64_t count = 0;
  uint64_t weight = 0;
  uint64_t first_time = 0;
};

pb::Profile cpuProfile(Trace& trace) {
  pb::Profile profile;
  StringTable strings(profile);
  const format::Header& header = trace.header();
  bool cpu_clock = format::sampleEventIsClock(header.options);

  addSampleType(profile, strings, "samples", "count");
  const std::string weight_name = cpu_clock ? "cpu" : header.options.sample_event;
  pb::ValueType* weight_type =
      addSampleType(profile, strings, weight_name, cpu_clock ? "nanoseconds" : "count");
  profile.mutable_period_type()->CopyFrom(*weight_type);
  if (header.options.sample_period != 0) {
    profile.set_period(static_cast<int64_t>(header.options.sample_period));
  } else if (cpu_clock && header.options.sample_frequency_hz != 0) {
    profile.set_period(1'000'000'000 / header.options.sample_frequency_hz);
  }
  setTimes(profile, trace);
  profile.set_default_sample_type(strings.index(weight_name));

  std::map<SampleKey, SampleTotal> totals;
  const std::vector<ContextTimeline> timelines = readContextTimelines(trace);
  SampleKey sample_key;
  sample_key.contexts.resize(timelines.size());
  trace.forEachRow<format::CpuSample>([&](const format::CpuSample& s) {
    sample_key.pid = s.pid;
    sample_key.tid = s.tid;
    sample_key.stack_id = s.stack_id;
    sample_key.goid = s.goid;
    for (size_t i = 0; i < timelines.size(); ++i)
      sample_key.contexts[i] = timelines[i].valueAt(static_cast<uint32_t>(s.tid), s.time);
    SampleTotal& total = totals[sample_key];
    if (total.count++ == 0) total.first_time = s.time;
    total.weight += s.weight;
  });

  PprofSamples samples(trace, profile, strings);
  int64_t pid_key = strings.index("pid"), tid_key = strings.index("tid");
  int64_t thread_key = strings.index("thread");
  int64_t goroutine_key = strings.index("goroutine");
  std::vector<int64_t> context_keys;
  for (const auto& context : header.options.contexts)
    context_keys.push_back(strings.index(context.name));
  for (const auto& [key, total] : totals) {
    pb::Sample* sample = samples.add(static_cast<uint32_t>(key.pid), key.stack_id, total.first_time,
                                     {total.count, total.weight});
    addNumberLabel(*sample, pid_key, key.pid);
    addNumberLabel(*sample, tid_key, key.tid);
    std::string name = trace.threadName(static_cast<uint32_t>(key.tid), total.first_time);
    if (!name.empty()) {
      pb::Label* label = sample->add_label();
      label->set_key(thread_key);
      label->set_str(strings.index(name));
    }
    if (key.goid != 0) addNumberLabel(*sample, goroutine_key, key.goid);
    for (size_t i = 0; i < key.contexts.size(); ++i) {
      if (!key.contexts[i]) continue;
      const ContextValueText& text = timelines[i].text();
      if (!text.isHex()) {
        addNumberLabel(*sample, context_keys[i], *key.contexts[i]);
        continue;
      }
      // An otel id: the hex text a tracing backend shows, as a string label.
      pb::Label* label = sample->add_label();
      label->set_key(context_keys[i]);
      label->set_str(strings.index(text.text(*key.contexts[i])));
    }
  }
  samples.finish();
  return profile;
}

// Go's heap profile layout, which pprof's readers know: allocations and
// bytes, allocated and in use, already scaled from the samples; the period
// is the mean bytes between samples.
pb::Profile allocProfile(Trace& trace) {
  pb::Profile profile;
  StringTable strings(profile);
  const AllocProfile allocations = collectAllocProfile(trace);
  addSampleType(profile, strings, "alloc_objects", "count");
  addSampleType(profile, strings, "alloc_space", "bytes");
  addSampleType(profile, strings, "inuse_objects", "count");
  addSampleType(profile, strings, "inuse_space", "bytes");
  pb::ValueType* period = profile.mutable_period_type();
  period->set_type(strings.index("space"));
  period->set_unit(strings.index("bytes"));
  profile.set_period(static_cast<int64_t>(allocations.sample_bytes));
  setTimes(profile, trace);
  profile.set_default_sample_type(strings.index("inuse_space"));

  PprofSamples samples(trace, profile, strings);
  const int64_t pid_key = strings.index("pid");
  for (const auto& [key, totals] : allocations.stacks) {
    pb::Sample* sample = samples.add(key.pid, key.stack_id, totals.first_time,
                                     {totals.allocations(), totals.allocated_bytes,
                                      totals.liveAllocations(), totals.live_bytes});
    addNumberLabel(*sample, pid_key, key.pid);
  }
  samples.finish();
  return profile;
}

}  // namespace

pb::Profile buildPprofProfile(Trace& trace, PprofProfileKind kind) {
  return kind == PprofProfileKind::kAllocations ? allocProfile(trace) : cpuProfile(trace);
}

Status writePprof(Trace& trace, std::ostream& out, PprofProfileKind kind) {
  pb::Profile profile = buildPprofProfile(trace, kind);
  std::string bytes;
  if (!profile.SerializeToString(&bytes)) return Error("pprof: cannot serialize the profile");
  auto packed = gzipCompress(bytes);
  if (!packed) return packed.error();
  out.write(packed->data(), static_cast<std::streamsize>(packed->size()));
  return Status::ok();
}

}  // namespace incise::analyzer
