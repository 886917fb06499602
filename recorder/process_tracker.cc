#include "recorder/process_tracker.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "objfile/elf_reader.h"
#include "recorder/eh_frame_collector.h"

namespace incise::recorder {

namespace {

// A frame outside every known mapping re-reads the maps at most this often
// (a broken frame-pointer walk yields garbage addresses; do not chase each).
constexpr uint64_t kMapsRereadIntervalNs = 1'000'000'000;

std::string trimNewline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

bool parseHex(std::string_view text, uint64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
  return ec == std::errc() && end == text.data() + text.size();
}

struct MapsLine {
  uint64_t start = 0, end = 0, offset = 0;
  std::string perms, dev, inode, path;
};

bool parseMapsLine(const std::string& line, MapsLine& out) {
  std::istringstream in(line);
  std::string range, offset;
  if (!(in >> range >> out.perms >> offset >> out.dev >> out.inode)) return false;
  std::getline(in >> std::ws, out.path);
  size_t dash = range.find('-');
  if (dash == std::string::npos) return false;
  return parseHex(std::string_view(range).substr(0, dash), out.start) &&
         parseHex(std::string_view(range).substr(dash + 1), out.end) &&
         parseHex(offset, out.offset) && out.perms.size() >= 3;
}

uint32_t protOf(const std::string& perms) {
  uint32_t prot = 0;
  if (perms[0] == 'r') prot |= PROT_READ;
  if (perms[1] == 'w') prot |= PROT_WRITE;
  if (perms[2] == 'x') prot |= PROT_EXEC;
  return prot;
}

}  // namespace

std::string ProcessTracker::readSmallFile(const std::string& path) const {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void ProcessTracker::notePid(uint32_t pid, uint64_t time) {
  if (pid == 0) return;
  auto it = processes_.find(pid);
  if (it != processes_.end()) {
    // A sample of the exited process may still arrive (it is older than the
    // exit); a later event under that pid is a new process reusing it.
    if (it->second.alive || time <= it->second.exit_time) return;
    processes_.erase(it);
  }
  readProcess(pid, time);
}

void ProcessTracker::noteThread(uint32_t pid, uint32_t tid, uint64_t time) {
  notePid(pid, time);
  auto it = processes_.find(pid);
  if (tid == 0 || it == processes_.end() || !it->second.alive) return;
  if (!it->second.threads.insert(tid).second) return;
  std::string comm = trimNewline(readSmallFile(proc_root_ + "/" + std::to_string(pid) + "/task/" +
                                               std::to_string(tid) + "/comm"));
  pending_.threads.push_back(format::Thread{.tid = tid, .pid = pid, .comm = comm, .time = time});
}

void ProcessTracker::readProcess(uint32_t pid, uint64_t time) {
  std::string dir = proc_root_ + "/" + std::to_string(pid);
  ProcessState& state = processes_[pid];
  std::string comm = readSmallFile(dir + "/comm");
  if (comm.empty()) {
    // Gone before we looked (a late sample): hold an empty state, which
    // forgetExited drops, rather than write a nameless process.
    markExited(state, time);
    return;
  }
  format::Process process{.pid = pid, .time = time};
  process.comm = trimNewline(std::move(comm));
  std::string cmdline = readSmallFile(dir + "/cmdline");
  for (size_t start = 0; start < cmdline.size();) {
    size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    process.cmdline.push_back(cmdline.substr(start, end - start));
    start = end + 1;
  }
  // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and ')'.
  std::string stat = readSmallFile(dir + "/stat");
  size_t paren = stat.rfind(')');
  if (paren != std::string::npos) {
    std::istringstream rest(stat.substr(paren + 1));
    std::string state_letter;
    rest >> state_letter >> process.ppid;
  }
  pending_.processes.push_back(process);

  readMaps(pid, state, time);

  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/task", ec)) {
    uint32_t tid = 0;
    std::string name = entry.path().filename().string();
    if (std::from_chars(name.data(), name.data() + name.size(), tid).ec != std::errc()) continue;
    if (!state.threads.insert(tid).second) continue;
    std::string thread_comm = trimNewline(readSmallFile(entry.path().string() + "/comm"));
    pending_.threads.push_back(
        format::Thread{.tid = tid, .pid = pid, .comm = thread_comm, .time = time});
  }
}

void ProcessTracker::markExited(ProcessState& state, uint64_t time) {
  state.alive = false;
  state.exit_time = time;
}

std::string ProcessTracker::buildIdOf(const std::string& open_path, const std::string& key) {
  auto it = build_ids_.find(key);
  if (it != build_ids_.end()) return it->second;
  Result<std::string> id = objfile::readBuildId(open_path);
  std::string value = id ? *id : std::string();
  build_ids_.emplace(key, value);
  return value;
}

void ProcessTracker::readMaps(uint32_t pid, ProcessState& state, uint64_t time) {
  std::string dir = proc_root_ + "/" + std::to_string(pid);
  std::istringstream maps(readSmallFile(dir + "/maps"));
  std::vector<MappedRange> ranges;
  std::string line;
  while (std::getline(maps, line)) {
    MapsLine m;
    if (!parseMapsLine(line, m)) continue;
    // Frames only land in executable mappings; JIT code is anonymous (no path).
    if (m.perms[2] != 'x') continue;
    MappedRange range{.start = m.start, .end = m.end, .file_offset = m.offset, .path = m.path};
    bool file_backed = !m.path.empty() && m.path[0] == '/';
    if (file_backed) {
      constexpr std::string_view kDeleted = " (deleted)";
      bool deleted =
          m.path.size() > kDeleted.size() &&
          m.path.compare(m.path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0;
      char range_name[64];
      snprintf(range_name, sizeof(range_name), "%lx-%lx", static_cast<unsigned long>(m.start),
               static_cast<unsigned long>(m.end));
      // map_files works for deleted files too; root/ resolves container paths.
      range.open_path = deleted ? dir + "/map_files/" + range_name : dir + "/root" + m.path;
      range.build_id = buildIdOf(range.open_path, m.dev + ":" + m.inode + ":" + m.path);
    }
    ranges.push_back(range);
    pending_.mappings.push_back(format::Mapping{.pid = pid,
                                                .start = m.start,
                                                .end = m.end,
                                                .file_offset = m.offset,
                                                .path = m.path,
                                                .build_id = range.build_id,
                                                .prot = protOf(m.perms),
                                                .time = time});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const MappedRange& a, const MappedRange& b) { return a.start < b.start; });
  state.ranges = std::move(ranges);
  state.maps_read_time = time;
}

const ProcessTracker::MappedRange* ProcessTracker::findRange(const ProcessState& state,
                                                             uint64_t address) const {
  auto it = std::upper_bound(state.ranges.begin(), state.ranges.end(), address,
                             [](uint64_t a, const MappedRange& r) { return a < r.start; });
  if (it == state.ranges.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

void ProcessTracker::onFork(uint32_t parent_pid, uint32_t child_pid, uint32_t child_tid,
                            uint64_t time) {
  if (child_pid != parent_pid) {
    notePid(child_pid, time);
  } else {
    noteThread(child_pid, child_tid, time);
  }
}

void ProcessTracker::onExec(uint32_t pid, uint64_t time) {
  // A new image: forget what we knew and read it again.
  processes_.erase(pid);
  readProcess(pid, time);
}

void ProcessTracker::onComm(uint32_t pid, uint32_t tid, const std::string& comm, uint64_t time) {
  auto it = processes_.find(pid);
  if (it != processes_.end()) it->second.threads.insert(tid);
  pending_.threads.push_back(format::Thread{.tid = tid, .pid = pid, .comm = comm, .time = time});
}

void ProcessTracker::onExit(uint32_t pid, uint32_t tid, bool whole_process, uint64_t time) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  if (whole_process) {
    markExited(it->second, time);
  } else {
    exited_threads_.push_back(ExitedThread{.pid = pid, .tid = tid, .time = time});
  }
}

void ProcessTracker::forgetExited(uint64_t time) {
  if (time - last_liveness_sweep_ >= kLivenessSweepNs) {
    last_liveness_sweep_ = time;
    for (auto& [pid, state] : processes_) {
      if (state.alive && access((proc_root_ + "/" + std::to_string(pid)).c_str(), F_OK) != 0)
        markExited(state, time);
    }
  }
  std::erase_if(processes_, [&](const auto& entry) {
    const ProcessState& state = entry.second;
    return !state.alive && time > state.exit_time + kExitedRetentionNs;
  });
  std::erase_if(exited_threads_, [&](const ExitedThread& thread) {
    if (time <= thread.time + kExitedRetentionNs) return false;
    auto it = processes_.find(thread.pid);
    if (it != processes_.end()) it->second.threads.erase(thread.tid);
    return true;
  });
}

size_t ProcessTracker::threadCount() const {
  size_t count = 0;
  for (const auto& [pid, state] : processes_) count += state.threads.size();
  return count;
}

void ProcessTracker::setMetadataPressure(size_t bytes, std::function<void()> handler) {
  pressure_bytes_ = bytes;
  pressure_handler_ = std::move(handler);
}

void ProcessTracker::queueObject(format::ObjectSymbols object) {
  // Heap estimate: each symbol is a struct plus its name (often longer than
  // the small-string buffer), then the unwind tables.
  size_t bytes = object.eh_frame.size() + object.eh_frame_hdr.size() +
                 object.segments.size() * sizeof(format::Segment);
  for (const format::Symbol& symbol : object.symbols) bytes += sizeof(symbol) + symbol.name.size();
  pending_object_bytes_ += bytes;
  pending_.objects.push_back(std::move(object));
  if (pressure_handler_ && pending_object_bytes_ >= pressure_bytes_) pressure_handler_();
}

void ProcessTracker::noteUserFrames(uint32_t pid, std::span<const uint64_t> frames, uint64_t time) {
  if (frames.empty() || pid == 0) return;
  notePid(pid, time);
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  ProcessState& state = it->second;
  for (size_t i = 0; i < frames.size(); ++i) {
    const uint64_t address = frames[i];
    const MappedRange* range = findRange(state, address);
    if (!range && state.alive && time - state.maps_read_time > kMapsRereadIntervalNs) {
      readMaps(pid, state, time);
      range = findRange(state, address);
    }
    if (!range || range->open_path.empty()) continue;
    std::string key = range->build_id.empty() ? range->path : range->build_id;
    // Callers' frames are return addresses: the analyzer names them at
    // address - 1, which is in the calling function even when the call was
    // its last instruction (a noreturn callee), so a subset keeps that too.
    const bool return_address = i > 0;
    if (auto large = large_objects_.find(key); large != large_objects_.end()) {
      noteHitOffset(large->second, *range, address, return_address);
      continue;
    }
    if (hit_objects_.count(key)) continue;
    startHitObject(key, *range, address, return_address);
  }
}

Result<format::ObjectSymbols> ProcessTracker::readHitObject(const HitObject& hit) {
  Result<format::ObjectSymbols> object = readObjectSymbols(hit);
  if (object && embed_unwind_tables_) {
    Status tables = addUnwindTables(hit.open_path, *object);
    if (!tables) tables = addUnwindTables(hit.path, *object);
    if (!tables) pending_.notes.push_back("unwind tables of " + hit.path + ": " + tables.message());
  }
  return object;
}

void ProcessTracker::noteHitOffset(LargeObject& large, const MappedRange& range, uint64_t address,
                                   bool return_address) {
  const uint64_t offset = address - range.start + range.file_offset;
  large.file_offsets.insert(offset);
  if (return_address && offset > 0) large.file_offsets.insert(offset - 1);
}

void ProcessTracker::startHitObject(const std::string& key, const MappedRange& range,
                                    uint64_t address, bool return_address) {
  HitObject hit{.path = range.path, .open_path = range.open_path, .build_id = range.build_id};
  hit_objects_.emplace(key, hit);
  if (embedsHitSubset(hit, full_table_limit_)) {
    LargeObject large{.hit = hit};
    if (large_objects_.size() < kMaxOpenLargeObjects)
      large.fd = open(hit.open_path.c_str(), O_RDONLY | O_CLOEXEC);
    noteHitOffset(large, range, address, return_address);
    large_objects_.emplace(key, std::move(large));
    return;
  }
  // Read now: the process (and its /proc/PID/root) may be gone by the end.
  Result<format::ObjectSymbols> object = readHitObject(hit);
  if (object) {
    queueObject(object.take());  // may write the queued metadata out
  } else {
    pending_.notes.push_back(object.error().message());
  }
}

void ProcessTracker::readLargeObjects() {
  for (auto& [key, large] : large_objects_) {
    HitObject hit = large.hit;
    if (large.fd >= 0) hit.open_path = "/proc/self/fd/" + std::to_string(large.fd);
    Result<format::ObjectSymbols> object = readHitObject(hit);
    if (large.fd >= 0) close(large.fd);
    large.fd = -1;
    if (!object) {
      pending_.notes.push_back(object.error().message());
      continue;
    }
    object->path = large.hit.path;
    const size_t total = keepHitSymbols(*object, large.file_offsets);
    pending_.notes.push_back(large.hit.path + ": " + std::to_string(object->symbols.size()) +
                             " of " + std::to_string(total) +
                             " symbols embedded (a large table: only the functions hit)");
    queueObject(object.take());
  }
  large_objects_.clear();
}

ProcessTracker::~ProcessTracker() {
  for (auto& [key, large] : large_objects_) {
    if (large.fd >= 0) close(large.fd);
  }
}

void ProcessTracker::noteStackWords(uint32_t pid, uint64_t sp, std::span<const uint8_t> stack,
                                    uint64_t time) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  // Words inside a known executable mapping are return-address candidates.
  // A word that looks like a library address (the mmap area, far from the
  // stack itself) but hits no known mapping means the maps are stale (a
  // library loaded after we read them): re-read, at most once per interval.
  ProcessState& state = it->second;
  // Pointers into the thread's own stack (8 MiB by default) are not code.
  constexpr uint64_t kStackReach = 16u << 20;
  // A library loaded right after exec must be known before a short program ends.
  constexpr uint64_t kStaleRereadIntervalNs = 50'000'000;
  constexpr size_t kMaxNonCodePages = 1u << 16;
  std::vector<uint64_t> code;
  std::vector<uint64_t> unknown;
  for (int pass = 0; pass < 2; ++pass) {
    code.clear();
    unknown.clear();
    for (size_t at = 0; at + sizeof(uint64_t) <= stack.size(); at += sizeof(uint64_t)) {
      uint64_t word = 0;
      std::memcpy(&word, stack.data() + at, sizeof(word));
      const MappedRange* range = findRange(state, word);
      if (range != nullptr) {
        if (!range->open_path.empty()) code.push_back(word);
      } else if (word >= 0x7f0000000000ull && word < 0x800000000000ull &&
                 (word + kStackReach < sp || word > sp + kStackReach) &&
                 !state.non_code_pages.count(word >> 12)) {
        unknown.push_back(word);
      }
    }
    if (pass == 1 || unknown.empty() || !state.alive ||
        time - state.maps_read_time <= kStaleRereadIntervalNs)
      break;
    readMaps(pid, state, time);
  }
  // Still unknown after a fresh read: data, not code; do not re-read for them again.
  if (time == state.maps_read_time && state.non_code_pages.size() < kMaxNonCodePages) {
    for (uint64_t word : unknown) {
      if (findRange(state, word) == nullptr) state.non_code_pages.insert(word >> 12);
    }
  }
  noteUserFrames(pid, code, time);
}

void ProcessTracker::noteKernelFrames(std::span<const uint64_t> frames) {
  kernel_addresses_.insert(frames.begin(), frames.end());
}

format::MetadataDelta ProcessTracker::takeDelta(uint64_t time) {
  format::MetadataDelta delta = std::move(pending_);
  pending_ = format::MetadataDelta();
  pending_object_bytes_ = 0;
  delta.time = time;
  return delta;
}

std::vector<HitObject> ProcessTracker::hitObjects() const {
  std::vector<HitObject> out;
  for (const auto& [key, object] : hit_objects_) out.push_back(object);
  return out;
}

std::vector<uint32_t> ProcessTracker::knownPids() const {
  std::vector<uint32_t> out;
  for (const auto& [pid, state] : processes_) out.push_back(pid);
  std::sort(out.begin(), out.end());
  return out;
}

size_t ProcessTracker::mappingCount(uint32_t pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? 0 : it->second.ranges.size();
}

}  // namespace incise::recorder
