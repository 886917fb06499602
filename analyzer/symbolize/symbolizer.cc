#include "analyzer/symbolize/symbolizer.h"

#include <sys/mman.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <new>
#include <type_traits>
#include <unordered_set>

#include "analyzer/symbolize/stack_frames.h"
#include "analyzer/unwind/unwind_marker.h"
#include "format/event_kinds.h"

namespace incise::analyzer {
namespace {

// Frame-store spaces: what a frame's identity is relative to.
enum class Space : uint64_t {
  kObject = 1,
  kKernel = 2,
  kPerfMapEntry = 3,
  kUnmapped = 4,
  kAnonymousCode = 5,  // executable memory without a file or JIT map entry
};

uint64_t space(Space tag, uint64_t id = 0) {
  return static_cast<uint64_t>(tag) << 56 | id;
}

// Answers for kernel addresses are shared by every pid.
constexpr uint64_t kKernelAnswerSpace = uint64_t{1} << 32;

void appendHexDigits(std::string& text, uint64_t value) {
  char digits[16];
  const auto converted = std::to_chars(std::begin(digits), std::end(digits), value, 16);
  text.append(digits, converted.ptr);
}

void appendHex(std::string& text, uint64_t value) {
  text += "0x";
  appendHexDigits(text, value);
}

std::string basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Memory that behaves as anonymous although it has a name: JIT code lives there.
bool isFileBacked(const format::Mapping& mapping) {
  const std::string& path = mapping.path;
  if (path.empty() || path.front() != '/') return false;
  return path.rfind("//anon", 0) != 0 && path.rfind("/memfd:", 0) != 0 &&
         path.rfind("/dev/zero", 0) != 0 && path.rfind("/SYSV", 0) != 0;
}

// The page the kernel maps at the top of user space (x86-64, 4- or 5-level
// paging) on a process's first uprobe hit: out-of-line copies of probed
// instructions and the uretprobe trampoline, which also stands in for the
// return address of every function with a pending uretprobe. It never shows
// in /proc/PID/maps at exec, so no mapping names it.
bool isUprobePage(uint64_t address) {
  constexpr uint64_t kPage = 4096;
  for (uint64_t task_size : {0x7ffffffff000ULL, 0xfffffffffff000ULL}) {
    if (address >= task_size - kPage && address < task_size) return true;
  }
  return false;
}

// The kernel functions between a tracepoint (or perf event) and the BPF
// program attached to it, and the program itself (`bpf_prog_<tag>_<name>`
// when the JIT publishes its symbols).
bool isTracingMachinery(std::string_view function) {
  for (std::string_view prefix :
       {"bpf_prog_", "bpf_trace_run", "__bpf_trace_", "__traceiter_", "trace_call_bpf",
        "__bpf_prog_run", "bpf_dispatcher_", "perf_trace_run_bpf_submit", "bpf_get_stack"}) {
    if (function.starts_with(prefix)) return true;
  }
  return false;
}

// Not an address: the key of the one "[stack cut]" frame.
constexpr uint64_t kStackCutKey = UINT64_MAX;

void nameUnknown(Frame& frame, uint64_t address) {
  frame.name = frame.module.empty() ? "[unknown] " : frame.module + '+';
  appendHex(frame.name, frame.module.empty() ? address : frame.module_offset);
}

}  // namespace

size_t Symbolizer::KeyHash::operator()(const Key& key) const {
  // splitmix64 finalizer over both words: addresses differ in low bits only.
  uint64_t x = key.address ^ (key.space * 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<size_t>(x ^ (x >> 31));
}

Symbolizer::Symbolizer(const format::Metadata& metadata, SymbolizerOptions options)
    : names_(options.names), finder_(std::move(options)), embedded_(metadata.objects) {
  for (size_t i = 0; i < embedded_.size(); ++i) {
    const format::ObjectSymbols& object = embedded_[i];
    // A later copy of the same object wins only if it knows more.
    auto remember = [&](std::unordered_map<std::string, size_t>& index, const std::string& key) {
      if (key.empty()) return;
      auto [it, inserted] = index.emplace(key, i);
      if (!inserted && embedded_[it->second].symbols.size() <= object.symbols.size())
        it->second = i;
    };
    remember(embedded_by_build_id_, object.build_id);
    remember(embedded_by_path_, object.path);
  }

  for (const format::Mapping& mapping : metadata.mappings) {
    // Data mappings hold no frames; an address in one is outside code.
    // (prot 0: a recorder that kept executable mappings only and said nothing.)
    if (mapping.prot != 0 && (mapping.prot & PROT_EXEC) == 0) continue;
    const bool embedded_by_name = embedded_by_path_.count(mapping.path) != 0;
    const uint32_t object = isFileBacked(mapping) || embedded_by_name || !mapping.build_id.empty()
                                ? objectFor(mapping.build_id, mapping.path)
                                : kAnonymous;
    mappings_[mapping.pid].add(mapping.start, mapping.end, mapping.time,
                               {object, mapping.start, mapping.file_offset});
  }
  for (auto& [pid, intervals] : mappings_) intervals.finish();

  // Snapshots usually repeat earlier lines; one copy of each entry is enough.
  std::unordered_set<std::string> seen;
  for (const format::PerfMapSnapshot& snapshot : metadata.perf_maps) {
    for (const format::PerfMapEntry& entry : snapshot.entries) {
      if (entry.size == 0 || entry.start + entry.size < entry.start) continue;
      std::string identity = std::to_string(snapshot.pid) + ' ' + std::to_string(entry.start) +
                             ' ' + std::to_string(entry.size) + ' ' + entry.name;
      if (!seen.insert(std::move(identity)).second) continue;
      perf_map_names_.push_back(entry.name);
      perf_maps_[snapshot.pid].add(
          entry.start, entry.start + entry.size, snapshot.time,
          {static_cast<uint32_t>(perf_map_names_.size() - 1), entry.start});
    }
  }
  for (auto& [pid, intervals] : perf_maps_) intervals.finish();

  kernel_ = SymbolTable::fromKernel(metadata.kernel_symbols);
}

Symbolizer::~Symbolizer() = default;

std::pair<Frame&, bool> Symbolizer::frameFor(const Key& key) {
  const auto next = static_cast<uint32_t>(frame_count_);
  auto [id, inserted] = frame_index_.findOrInsert(
      KeyHash()(key), next, [&](uint32_t known) { return keyedFrame(known).key == key; });
  if (!inserted) return {keyedFrame(id).frame, false};
  if (id % kFramesPerBlock == 0) {
    frame_blocks_.push_back(std::make_unique<KeyedFrame[]>(kFramesPerBlock));
  }
  ++frame_count_;
  KeyedFrame& made = keyedFrame(id);
  made.key = key;
  made.frame.id = id;
  return {made.frame, true};
}

uint32_t Symbolizer::objectFor(const std::string& build_id, const std::string& path) {
  const std::string key = build_id.empty() ? "path:" + path : "build-id:" + build_id;
  auto [it, inserted] = object_by_key_.emplace(key, static_cast<uint32_t>(objects_.size()));
  if (inserted) {
    ObjectState object;
    object.path = path;
    object.build_id = build_id;
    object.module = basename(path);
    objects_.push_back(std::move(object));
  }
  return it->second;
}

const format::ObjectSymbols* Symbolizer::embeddedFor(const ObjectState& object) const {
  if (!object.build_id.empty()) {
    auto by_id = embedded_by_build_id_.find(object.build_id);
    if (by_id != embedded_by_build_id_.end()) return &embedded_[by_id->second];
  }
  auto by_path = embedded_by_path_.find(object.path);
  if (by_path == embedded_by_path_.end()) return nullptr;
  const format::ObjectSymbols& candidate = embedded_[by_path->second];
  // Same path, another build: a different file that happened to live there.
  if (!object.build_id.empty() && !candidate.build_id.empty() &&
      candidate.build_id != object.build_id) {
    return nullptr;
  }
  return &candidate;
}

Symbolizer::ObjectState& Symbolizer::resolvedObject(uint32_t index) {
  ObjectState& object = objects_[index];
  if (object.resolved) return object;
  object.resolved = true;
  ObjectIdentity identity{object.path, object.build_id, {}};
  const format::ObjectSymbols* embedded = embeddedFor(object);
  if (embedded) {
    object.segments = embedded->segments;
    if (identity.build_id.empty()) identity.build_id = embedded->build_id;
    identity.debug_link = embedded->debug_link;
    for (const format::Symbol& symbol : embedded->symbols) {
      // The recorder embeds the FDE range of a hit no symbol names as a
      // symbol without a name.
      if (symbol.name.empty() && symbol.size != 0 && symbol.address + symbol.size > symbol.address)
        object.unnamed_functions.push_back({symbol.address, symbol.address + symbol.size});
    }
    if (!embedded->eh_frame.empty()) {
      std::vector<objfile::FunctionRange> ranges =
          objfile::readFdeRanges(embedded->eh_frame, embedded->eh_frame_vaddr);
      object.unnamed_functions.insert(object.unnamed_functions.end(), ranges.begin(), ranges.end());
    }
  }
  SymbolTable embedded_table;
  if (embedded) embedded_table = SymbolTable::fromObject(embedded->symbols);
  std::optional<FoundSymbols> found = finder_.find(identity, counters_);
  if (found) {
    if (object.segments.empty()) object.segments = std::move(found->object.segments);
    // The tables point into these symbols' names.
    object.found_symbols = std::move(found->object.symbols);
  }
  SymbolTable found_table = SymbolTable::fromObject(object.found_symbols);
  if (found) {
    object.symbol_file_root = found->file_root;
    object.symbol_file_relative = found->file_relative;
  }
  const bool found_wins = found && (found->full_table || embedded_table.empty());
  if (found_wins) {
    object.table = std::move(found_table);
    object.source = found->source;
    object.fallback = std::move(embedded_table);
    object.fallback_source = SymbolSource::kEmbedded;
  } else {
    object.table = std::move(embedded_table);
    object.source = SymbolSource::kEmbedded;
    object.fallback = std::move(found_table);
    if (found) object.fallback_source = found->source;
  }
  if (!found || !found->full_table) {
    std::vector<objfile::FunctionRange> ranges = finder_.functionRanges(identity);
    object.unnamed_functions.insert(object.unnamed_functions.end(), ranges.begin(), ranges.end());
  }
  std::sort(object.unnamed_functions.begin(), object.unnamed_functions.end(),
            [](const auto& a, const auto& b) {
              return a.start != b.start ? a.start < b.start : a.end > b.end;
            });
  if (object.table.empty() && object.fallback.empty()) ++counters_.missing_objects;
  return object;
}

const Frame& Symbolizer::lookup(uint32_t pid, uint64_t address, uint64_t time) {
  ++counters_.lookups;
  const Key key{format::isKernelAddress(address) ? kKernelAnswerSpace : pid, address};
  if (!answers_) sizeAnswerCache(kFirstAnswerSlots);
  CachedAnswer& answer = answers_[KeyHash()(key) & (answer_slots_ - 1)];
  const Frame* frame = answer.frame;
  if (!frame || !(answer.key == key) || time < answer.valid_from || time >= answer.valid_until) {
    ++counters_.cache_misses;
    answer.key = key;
    frame = &resolve(pid, address, time, answer);
    if (++misses_at_this_size_ > 2 * answer_slots_ && answer_slots_ < kMaxAnswerSlots)
      sizeAnswerCache(answer_slots_ * 4);
  }
  if (!frame->known()) ++counters_.unsymbolized_frames;
  return *frame;
}

void Symbolizer::sizeAnswerCache(size_t slots) {
  static_assert(std::is_trivially_copyable_v<CachedAnswer>);
  answers_.reset(static_cast<CachedAnswer*>(std::calloc(slots, sizeof(CachedAnswer))));
  if (!answers_) throw std::bad_alloc();
  answer_slots_ = slots;
  misses_at_this_size_ = 0;
}

const Frame* Symbolizer::tryLookup(uint32_t pid, uint64_t address, uint64_t time) {
  const Frame& frame = lookup(pid, address, time);
  return frame.known() ? &frame : nullptr;
}

const Frame& Symbolizer::resolve(uint32_t pid, uint64_t address, uint64_t time,
                                 CachedAnswer& answer) {
  answer.valid_from = 0;
  answer.valid_until = TimedIntervals<MappingValue>::kForever;
  auto narrow = [&](uint64_t from, uint64_t until) {
    answer.valid_from = std::max(answer.valid_from, from);
    answer.valid_until = std::min(answer.valid_until, until);
  };
  if (format::isKernelAddress(address)) {
    answer.frame = &kernelFrame(address);
    return *answer.frame;
  }
  if (isUnwindStop(address)) {
    // The offline unwinder's end-of-walk marker (analyzer/unwind/unwind_marker.h).
    Frame& stop = frameFor(Key{space(Space::kUnmapped), kUnwindStopAddress}).first;
    stop.name = stop.function = std::string(kUnwindStopName);
    stop.module = "[unwind]";
    answer.frame = &stop;
    return stop;
  }

  const MappingValue* mapping = nullptr;
  if (auto maps = mappings_.find(pid); maps != mappings_.end()) {
    const auto hit = maps->second.find(address, time, /*or_earliest_later=*/true);
    narrow(hit.valid_from, hit.valid_until);
    mapping = hit.value;
    if (hit.from_later) ++counters_.mapping_time_fallbacks;
  }
  if (mapping && mapping->object != kAnonymous) {
    answer.frame = &objectFrame(*mapping, address);
    return *answer.frame;
  }
  if (auto jit = perf_maps_.find(pid); jit != perf_maps_.end()) {
    // V8 writes a perf-map line when it creates the code, before the code
    // runs; the recorder copies the map about once a second. A sample before
    // the first copy that lists its address is in that code.
    const auto hit = jit->second.find(address, time, /*or_earliest_later=*/true);
    narrow(hit.valid_from, hit.valid_until);
    if (hit.value) {
      answer.frame = &perfMapFrame(pid, *hit.value, address);
      return *answer.frame;
    }
  }
  if (mapping) {
    // Executable memory (JIT code with no map entry): unnamed, but code.
    Frame& frame = frameFor(Key{space(Space::kAnonymousCode), address}).first;
    if (frame.name.empty()) {
      frame.module_offset = address;
      nameUnknown(frame, address);
    }
    answer.frame = &frame;
    return frame;
  }
  answer.frame = &unknownFrame(address);
  return *answer.frame;
}

const Frame& Symbolizer::kernelFrame(uint64_t address) {
  auto [frame, inserted] = frameFor(Key{space(Space::kKernel), address});
  if (!inserted) return frame;
  frame.kernel = true;
  frame.module_offset = address;
  if (std::optional<size_t> hit = kernel_.find(address)) {
    frame.function = kernel_.demangledName(*hit);
    frame.symbol_offset = address - kernel_.start(*hit);
    frame.module = kernel_.module(*hit).empty() ? "[kernel.kallsyms]"
                                                : "[" + std::string(kernel_.module(*hit)) + "]";
    frame.source = SymbolSource::kKernel;
    frame.name = displayedFunctionName(frame.function, names_);
    frame.tracing_machinery = isTracingMachinery(frame.function);
  } else {
    nameUnknown(frame, address);
  }
  return frame;
}

std::optional<SourceLine> Symbolizer::sourceLine(const Frame& frame) {
  if (frame.object >= objects_.size()) return std::nullopt;
  ObjectState& object = objects_[frame.object];
  if (!object.lines_read) {
    object.lines_read = true;
    DebugFileFinder::BeneathFile file =
        DebugFileFinder::openBeneath(object.symbol_file_root, object.symbol_file_relative);
    if (file.fd) object.lines = SourceLines::open(std::move(file.fd));
  }
  if (!object.lines) return std::nullopt;
  return object.lines->find(frame.module_offset);
}

const Frame& Symbolizer::stackCut() {
  auto [frame, inserted] = frameFor(Key{space(Space::kUnmapped), kStackCutKey});
  if (inserted) {
    frame.name = frame.function = std::string(kStackCutName);
    frame.module = "[cut]";
  }
  return frame;
}

const Frame& Symbolizer::objectFrame(const MappingValue& mapping, uint64_t address) {
  const uint64_t file_offset = address - mapping.start + mapping.file_offset;
  auto [frame, inserted] = frameFor(Key{space(Space::kObject, mapping.object), file_offset});
  if (!inserted) return frame;
  ObjectState& object = resolvedObject(mapping.object);
  frame.module = object.module;
  frame.object = mapping.object;
  // Without segments, assume the common layout where ELF addresses equal file offsets.
  uint64_t vaddr = file_offset;
  for (const format::Segment& segment : object.segments) {
    if (file_offset >= segment.file_offset &&
        file_offset - segment.file_offset < segment.file_size) {
      vaddr = segment.vaddr + (file_offset - segment.file_offset);
      break;
    }
  }
  frame.module_offset = vaddr;
  for (auto [table, source] : {std::pair{&object.table, object.source},
                               std::pair{&object.fallback, object.fallback_source}}) {
    if (std::optional<size_t> hit = table->find(vaddr)) {
      frame.function = table->demangledName(*hit);
      frame.symbol_offset = vaddr - table->start(*hit);
      frame.source = source;
      frame.name = displayedFunctionName(frame.function, names_);
      return frame;
    }
  }
  if (const objfile::FunctionRange* range =
          objfile::findFunctionRange(object.unnamed_functions, vaddr)) {
    // One row per unnamed function, not per address.
    frame.symbol_offset = vaddr - range->start;
    frame.name = frame.module + "!fn_";
    appendHexDigits(frame.name, range->start);
    return frame;
  }
  nameUnknown(frame, address);
  return frame;
}

const Frame& Symbolizer::perfMapFrame(uint32_t pid, const PerfMapValue& entry, uint64_t address) {
  auto [frame, inserted] = frameFor(Key{space(Space::kPerfMapEntry, entry.entry), address});
  if (!inserted) return frame;
  frame.function = perf_map_names_[entry.entry];
  frame.module = "perf-" + std::to_string(pid) + ".map";
  frame.module_offset = address;
  frame.symbol_offset = address - entry.start;
  frame.source = SymbolSource::kPerfMap;
  frame.name = frame.function;
  return frame;
}

const Frame& Symbolizer::unknownFrame(uint64_t address) {
  auto [frame, inserted] = frameFor(Key{space(Space::kUnmapped), address});
  if (!inserted) return frame;
  frame.module_offset = address;
  if (isUprobePage(address)) {
    frame.name = frame.function = frame.module = "[uprobes]";
    frame.source = SymbolSource::kKernel;
    return frame;
  }
  frame.outside_code = true;
  nameUnknown(frame, address);
  return frame;
}

}  // namespace incise::analyzer
