#include "analyzer/export/pprof_export.h"

#include <sys/mman.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

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
  // `go tool pprof`). Moves `pid`'s executable there: the lowest file-backed
  // executable mapping of the image the process ran at `time` (mappings from
  // its last exec before then, so not the `env` or shell that exec'd it).
  void putExecutableFirst(uint32_t pid, uint64_t time) {
    auto found = by_pid_.find(pid);
    if (found == by_pid_.end()) return;
    uint64_t exec_time = 0;
    for (const format::Process& process : metadata_.processes) {
      if (process.pid == pid && process.time <= time) exec_time = std::max(exec_time, process.time);
    }
    const format::Mapping* executable = nullptr;
    for (const format::Mapping* m : found->second) {
      if (m->path.empty() || m->path.front() != '/' || m->time < exec_time) continue;
      // Its code: the mapping the samples' locations are in.
      if (m->prot != 0 && (m->prot & PROT_EXEC) == 0) continue;
      if (!executable || m->start < executable->start) executable = m;
    }
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

}  // namespace

pb::Profile buildPprofProfile(Trace& trace) {
  pb::Profile profile;
  StringTable strings(profile);
  const format::Header& header = trace.header();
  bool cpu_clock = format::sampleEventIsClock(header.options);

  pb::ValueType* samples_type = profile.add_sample_type();
  samples_type->set_type(strings.index("samples"));
  samples_type->set_unit(strings.index("count"));
  pb::ValueType* weight_type = profile.add_sample_type();
  const std::string weight_name = cpu_clock ? "cpu" : header.options.sample_event;
  weight_type->set_type(strings.index(weight_name));
  weight_type->set_unit(strings.index(cpu_clock ? "nanoseconds" : "count"));
  profile.mutable_period_type()->CopyFrom(*weight_type);
  if (header.options.sample_period != 0) {
    profile.set_period(static_cast<int64_t>(header.options.sample_period));
  } else if (cpu_clock && header.options.sample_frequency_hz != 0) {
    profile.set_period(1'000'000'000 / header.options.sample_frequency_hz);
  }
  profile.set_time_nanos(static_cast<int64_t>(header.start_wall_ns));
  profile.set_duration_nanos(static_cast<int64_t>(trace.durationNs()));
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

  MappingIndex mappings(trace.reader().metadata(), profile, strings);
  Symbolizer& symbolizer = trace.symbolizer();
  // Locations per (pid, looked-up address): a return address is stored as
  // the call's address (return address - 1), what pprof's own symbolizer
  // expects of a caller's pc.
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> locations;
  std::map<std::pair<std::string, std::string>, uint64_t> functions;  // (name, module)
  auto locationFor = [&](uint32_t pid, const StackFrame& stack_frame) {
    auto [it, inserted] =
        locations.try_emplace({pid, stack_frame.address}, profile.location_size() + 1);
    if (!inserted) return it->second;
    const Frame& frame = *stack_frame.frame;
    pb::Location* location = profile.add_location();
    location->set_id(it->second);
    location->set_address(stack_frame.address);
    uint64_t mapping_id = 0;
    if (!format::isKernelAddress(stack_frame.address)) {
      mapping_id = mappings.idFor(pid, stack_frame.address);
      location->set_mapping_id(mapping_id);
    }
    // An unnamed frame in a mapping gets no line: pprof then names it
    // itself from the binary (by build-id or path), which a placeholder
    // name ("libc.so.6+0x16db75") would stop.
    if (!frame.known() && mapping_id != 0) {
      mappings.noteUnnamed(mapping_id);
      return it->second;
    }
    // Lines exist where a local debug file or binary has DWARF line tables.
    const std::optional<SourceLine> source = symbolizer.sourceLine(frame);
    auto [fn, new_function] =
        functions.try_emplace({frame.name, frame.module}, profile.function_size() + 1);
    if (new_function) {
      pb::Function* function = profile.add_function();
      function->set_id(fn->second);
      function->set_name(strings.index(frame.name));
      function->set_system_name(
          strings.index(frame.function.empty() ? frame.name : frame.function));
      // A source file, or nothing: the module is the mapping's, not a file to list.
      function->set_filename(strings.index(source ? source->file : std::string()));
    }
    pb::Line* line = location->add_line();
    line->set_function_id(fn->second);
    if (source) line->set_line(source->line);
    return it->second;
  };

  const format::StackTable& stacks = trace.stacks();
  std::unordered_map<uint32_t, uint64_t> samples_per_pid;
  std::unordered_map<uint32_t, uint64_t> first_sample_of_pid;
  for (const auto& [key, total] : totals) {
    samples_per_pid[static_cast<uint32_t>(key.pid)] += total.count;
    auto [first, inserted] = first_sample_of_pid.try_emplace(key.pid, total.first_time);
    if (!inserted) first->second = std::min(first->second, total.first_time);
  }
  std::vector<StackFrame> frames;
  int64_t pid_key = strings.index("pid"), tid_key = strings.index("tid");
  int64_t thread_key = strings.index("thread");
  int64_t goroutine_key = strings.index("goroutine");
  std::vector<int64_t> context_keys;
  for (const auto& context : header.options.contexts)
    context_keys.push_back(strings.index(context.name));
  for (const auto& [key, total] : totals) {
    pb::Sample* sample = profile.add_sample();
    uint32_t pid = static_cast<uint32_t>(key.pid);
    stackFrames(symbolizer, pid, stacks.frames(key.stack_id), total.first_time, frames);
    for (const StackFrame& frame : frames) sample->add_location_id(locationFor(pid, frame));
    sample->add_value(static_cast<int64_t>(total.count));
    sample->add_value(static_cast<int64_t>(total.weight));
    pb::Label* label = sample->add_label();
    label->set_key(pid_key);
    label->set_num(static_cast<int64_t>(key.pid));
    label = sample->add_label();
    label->set_key(tid_key);
    label->set_num(static_cast<int64_t>(key.tid));
    std::string name = trace.threadName(static_cast<uint32_t>(key.tid), total.first_time);
    if (!name.empty()) {
      label = sample->add_label();
      label->set_key(thread_key);
      label->set_str(strings.index(name));
    }
    if (key.goid != 0) {
      label = sample->add_label();
      label->set_key(goroutine_key);
      label->set_num(static_cast<int64_t>(key.goid));
    }
    for (size_t i = 0; i < key.contexts.size(); ++i) {
      if (!key.contexts[i]) continue;
      label = sample->add_label();
      label->set_key(context_keys[i]);
      label->set_num(static_cast<int64_t>(*key.contexts[i]));
    }
  }
  const auto busiest = std::max_element(
      samples_per_pid.begin(), samples_per_pid.end(), [](const auto& a, const auto& b) {
        return std::tie(a.second, b.first) < std::tie(b.second, a.first);
      });
  if (busiest != samples_per_pid.end())
    mappings.putExecutableFirst(busiest->first, first_sample_of_pid[busiest->first]);
  mappings.finish();
  return profile;
}

Status writePprof(Trace& trace, std::ostream& out) {
  pb::Profile profile = buildPprofProfile(trace);
  std::string bytes;
  if (!profile.SerializeToString(&bytes)) return Error("pprof: cannot serialize the profile");
  auto packed = gzipCompress(bytes);
  if (!packed) return packed.error();
  out.write(packed->data(), static_cast<std::streamsize>(packed->size()));
  return Status::ok();
}

}  // namespace incise::analyzer
