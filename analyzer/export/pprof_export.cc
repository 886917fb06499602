#include "analyzer/export/pprof_export.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyzer/diff/trace_facts.h"
#include "analyzer/export/gzip.h"
#include "analyzer/symbolize/symbolizer.h"

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

// The mappings of each process, to find the one holding an address.
class MappingIndex {
 public:
  MappingIndex(const format::Metadata& metadata, pb::Profile& profile, StringTable& strings)
      : profile_(profile), strings_(strings) {
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
    return hit ? idOf(hit) : 0;
  }

  // pprof readers take the first mapping for the main binary ("File:" in
  // `go tool pprof`). Moves `pid`'s executable there: its lowest file-backed
  // mapping, which is how /proc/PID/maps lists the executable, PIE or not.
  void putExecutableFirst(uint32_t pid) {
    auto found = by_pid_.find(pid);
    if (found == by_pid_.end()) return;
    for (const format::Mapping* m : found->second) {
      if (m->path.empty() || m->path.front() != '/') continue;
      const uint64_t id = idOf(m);
      const auto position = std::find_if(profile_.mapping().begin(), profile_.mapping().end(),
                                         [&](const pb::Mapping& x) { return x.id() == id; });
      profile_.mutable_mapping()->SwapElements(
          0, static_cast<int>(position - profile_.mapping().begin()));
      return;
    }
  }

 private:
  uint64_t idOf(const format::Mapping* hit) {
    auto [it, inserted] = ids_.try_emplace(hit, profile_.mapping_size() + 1);
    if (inserted) {
      pb::Mapping* mapping = profile_.add_mapping();
      mapping->set_id(it->second);
      mapping->set_memory_start(hit->start);
      mapping->set_memory_limit(hit->end);
      mapping->set_file_offset(hit->file_offset);
      mapping->set_filename(strings_.index(hit->path));
      mapping->set_build_id(strings_.index(hexBytes(hit->build_id)));
      mapping->set_has_functions(true);
    }
    return it->second;
  }

  pb::Profile& profile_;
  StringTable& strings_;
  std::unordered_map<uint32_t, std::vector<const format::Mapping*>> by_pid_;
  std::unordered_map<const format::Mapping*, uint64_t> ids_;
};

struct SampleKey {
  uint64_t pid, tid, stack_id;
  bool operator<(const SampleKey& o) const {
    return std::tie(pid, tid, stack_id) < std::tie(o.pid, o.tid, o.stack_id);
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
  bool cpu_clock =
      header.options.sample_event.empty() || header.options.sample_event == "cpu-clock";

  pb::ValueType* samples_type = profile.add_sample_type();
  samples_type->set_type(strings.index("samples"));
  samples_type->set_unit(strings.index("count"));
  pb::ValueType* weight_type = profile.add_sample_type();
  weight_type->set_type(strings.index(cpu_clock ? "cpu" : header.options.sample_event));
  weight_type->set_unit(strings.index(cpu_clock ? "nanoseconds" : "count"));
  profile.mutable_period_type()->CopyFrom(*weight_type);
  if (cpu_clock && header.options.sample_frequency_hz != 0) {
    profile.set_period(1'000'000'000 / header.options.sample_frequency_hz);
  }
  profile.set_time_nanos(static_cast<int64_t>(header.start_wall_ns));
  profile.set_duration_nanos(static_cast<int64_t>(trace.durationNs()));
  profile.set_default_sample_type(strings.index("cpu"));

  std::map<SampleKey, SampleTotal> totals;
  trace.forEachRow<format::CpuSample>([&](const format::CpuSample& s) {
    SampleTotal& total = totals[{s.pid, s.tid, s.stack_id}];
    if (total.count++ == 0) total.first_time = s.time;
    total.weight += s.weight;
  });

  MappingIndex mappings(trace.reader().metadata(), profile, strings);
  Symbolizer& symbolizer = trace.symbolizer();
  std::map<std::tuple<uint32_t, uint64_t, bool>, uint64_t> locations;  // (pid, address, leaf)
  std::map<std::pair<std::string, std::string>, uint64_t> functions;   // (name, module)
  auto locationFor = [&](uint32_t pid, uint64_t address, bool leaf, uint64_t time) {
    auto [it, inserted] = locations.try_emplace({pid, address, leaf}, profile.location_size() + 1);
    if (!inserted) return it->second;
    const Frame& frame = symbolizer.lookup(pid, leaf || address == 0 ? address : address - 1, time);
    auto [fn, new_function] =
        functions.try_emplace({frame.name, frame.module}, profile.function_size() + 1);
    if (new_function) {
      pb::Function* function = profile.add_function();
      function->set_id(fn->second);
      function->set_name(strings.index(frame.name));
      function->set_system_name(strings.index(frame.name));
      function->set_filename(strings.index(frame.module));
    }
    pb::Location* location = profile.add_location();
    location->set_id(it->second);
    location->set_address(address);
    if (!format::isKernelAddress(address)) {
      location->set_mapping_id(mappings.idFor(pid, address));
    }
    location->add_line()->set_function_id(fn->second);
    return it->second;
  };

  const format::StackTable& stacks = trace.stacks();
  std::unordered_map<uint32_t, uint64_t> samples_per_pid;
  for (const auto& [key, total] : totals)
    samples_per_pid[static_cast<uint32_t>(key.pid)] += total.count;
  int64_t pid_key = strings.index("pid"), tid_key = strings.index("tid");
  int64_t thread_key = strings.index("thread");
  for (const auto& [key, total] : totals) {
    pb::Sample* sample = profile.add_sample();
    uint32_t pid = static_cast<uint32_t>(key.pid);
    std::span<const uint64_t> frames = stacks.frames(key.stack_id);
    for (size_t i = 0; i < frames.size(); ++i) {
      sample->add_location_id(locationFor(pid, frames[i], i == 0, total.first_time));
    }
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
  }
  const auto busiest = std::max_element(
      samples_per_pid.begin(), samples_per_pid.end(), [](const auto& a, const auto& b) {
        return std::tie(a.second, b.first) < std::tie(b.second, a.first);
      });
  if (busiest != samples_per_pid.end()) mappings.putExecutableFirst(busiest->first);
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
