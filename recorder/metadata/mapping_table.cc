#include "recorder/metadata/mapping_table.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

namespace incise::recorder {

namespace {

constexpr std::string_view kDeletedSuffix = " (deleted)";

bool sameMapping(const ExecutableMapping& a, const ExecutableMapping& b) {
  return a.start == b.start && a.end == b.end && a.file_offset == b.file_offset &&
         a.object == b.object && a.prot == b.prot;
}

}  // namespace

bool MappedObject::fileBacked() const {
  return !path.empty() && path.front() == '/' && path.rfind("//anon", 0) != 0;
}

bool MappedObject::deleted() const {
  return path.size() > kDeletedSuffix.size() &&
         path.compare(path.size() - kDeletedSuffix.size(), kDeletedSuffix.size(), kDeletedSuffix) ==
             0;
}

int openMappedFile(const ExecutableMapping& mapping) {
  auto tryOpen = [](const std::string& path) {
    return path.empty() ? -1 : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  };
  int fd = tryOpen(mapping.open_path);
  if (fd < 0 && mapping.object) fd = tryOpen(mapping.object->image_path);
  if (fd < 0 && mapping.object && mapping.object->fileBacked() && !mapping.object->deleted())
    fd = tryOpen(mapping.object->path);
  return fd;
}

void MappingTable::subscribe(MappingObserver* observer) {
  observers_.push_back(observer);
}

void MappingTable::unsubscribe(MappingObserver* observer) {
  std::erase(observers_, observer);
}

std::shared_ptr<const MappedObject> MappingTable::object(const std::string& path,
                                                         const std::string& build_id,
                                                         const std::string& image_path) {
  std::string key = build_id;
  key += '\0';
  key += path;
  key += '\0';
  key += image_path;
  auto [it, inserted] = objects_.try_emplace(std::move(key));
  if (inserted) {
    it->second = std::make_shared<const MappedObject>(
        MappedObject{.path = path, .build_id = build_id, .image_path = image_path});
  }
  return it->second;
}

MappingTable::ProcessMaps* MappingTable::stateFor(uint32_t pid, uint64_t time, bool create) {
  if (pid == 0 || pid == ignored_pid_) return nullptr;
  auto it = processes_.find(pid);
  if (it != processes_.end()) {
    ProcessMaps& state = it->second;
    // A record after the exit names a new process that reused the pid (its
    // fork record was lost, or it was not followed).
    if (state.alive || time <= state.exit_time) return &state;
    if (!create) return nullptr;
    processes_.erase(it);
  } else if (!create) {
    return nullptr;
  }
  ProcessMaps& fresh = processes_[pid];
  fresh.image_time = fresh.floor_time = 0;
  return &fresh;
}

void MappingTable::notifyMap(const ExecutableMapping& mapping) {
  for (MappingObserver* observer : observers_) observer->onMap(mapping);
}

void MappingTable::cut(uint32_t pid, ProcessMaps& state, uint64_t start, uint64_t end,
                       uint64_t time) {
  auto overlaps = [&](const ExecutableMapping& range) {
    return range.start < end && range.end > start;
  };
  // The common case (a fresh range): nothing to cut, nothing to copy.
  if (std::none_of(state.ranges.begin(), state.ranges.end(), overlaps)) return;
  std::vector<ExecutableMapping> kept;
  kept.reserve(state.ranges.size() + 1);
  // Pieces stay inside their range, so the order by start is kept.
  for (ExecutableMapping& range : state.ranges) {
    if (!overlaps(range)) {
      kept.push_back(std::move(range));
      continue;
    }
    const uint64_t gone_start = std::max(range.start, start);
    const uint64_t gone_end = std::min(range.end, end);
    for (MappingObserver* observer : observers_) observer->onUnmap(pid, gone_start, gone_end, time);
    if (range.start < start) {  // the part below survives
      ExecutableMapping below = range;
      below.end = start;
      kept.push_back(std::move(below));
    }
    if (range.end > end) {  // the part above survives, at a later file offset
      ExecutableMapping above = std::move(range);
      above.file_offset += end - above.start;
      above.start = end;
      kept.push_back(std::move(above));
    }
  }
  state.ranges = std::move(kept);
}

void MappingTable::insert(ProcessMaps& state, ExecutableMapping mapping) {
  auto at = std::lower_bound(
      state.ranges.begin(), state.ranges.end(), mapping.start,
      [](const ExecutableMapping& range, uint64_t start) { return range.start < start; });
  state.ranges.insert(at, std::move(mapping));
}

void MappingTable::resolveVdso(ExecutableMapping& mapping) const {
  constexpr uint64_t kLowest64BitVdso = uint64_t{1} << 32;
  if (vdso_ && mapping.object && mapping.object->path == "[vdso]" &&
      mapping.object->build_id.empty() && mapping.start >= kLowest64BitVdso)
    mapping.object = vdso_;
}

void MappingTable::map(ExecutableMapping mapping) {
  if (mapping.end <= mapping.start || !mapping.object) return;
  resolveVdso(mapping);
  const bool create = !follow_only_known_;
  ProcessMaps* state = stateFor(mapping.pid, mapping.time, create);
  if (!state) return;
  if (mapping.time < state->floor_time) {
    ++stale_records_;
    return;
  }
  // A record older than a mapping already over its range lost the race
  // between two CPUs' rings: the newer one stands.
  for (const ExecutableMapping& range : state->ranges) {
    if (range.start >= mapping.end || range.end <= mapping.start) continue;
    if (sameMapping(range, mapping)) return;
    if (range.time > mapping.time) {
      ++stale_records_;
      return;
    }
  }
  cut(mapping.pid, *state, mapping.start, mapping.end, mapping.time);
  notifyMap(mapping);
  insert(*state, std::move(mapping));
}

void MappingTable::fork(uint32_t parent_pid, uint32_t child_pid, uint64_t time) {
  if (parent_pid == child_pid) return;  // a new thread shares the process's mappings
  if (child_pid == 0 || child_pid == ignored_pid_) return;
  auto parent = processes_.find(parent_pid);
  const bool parent_known = parent != processes_.end();
  if (!parent_known && follow_only_known_) return;
  ProcessMaps fresh;
  fresh.image_time = fresh.floor_time = time;
  if (parent_known) {
    fresh.complete = parent->second.complete;
    for (const ExecutableMapping& range : parent->second.ranges) {
      if (range.time > time) continue;  // mapped by the parent after the fork
      ExecutableMapping copy = range;
      copy.pid = child_pid;
      copy.time = time;
      fresh.ranges.push_back(std::move(copy));
    }
  }
  if (auto previous = processes_.find(child_pid); previous != processes_.end()) {
    if (previous->second.image_time > time) return;  // a late record: the pid was reused since
    // The pid's previous process exited unseen (its exit came from nowhere
    // or not yet): it is gone now.
    if (previous->second.alive) {
      for (MappingObserver* observer : observers_) observer->onExit(child_pid, time);
    }
  }
  ProcessMaps& child = processes_[child_pid] = std::move(fresh);
  for (const ExecutableMapping& range : child.ranges) notifyMap(range);
}

void MappingTable::exec(uint32_t pid, uint64_t time) {
  ProcessMaps* state = stateFor(pid, time, !follow_only_known_);
  if (!state) return;
  if (time < state->image_time) {
    ++stale_records_;
    return;
  }
  for (MappingObserver* observer : observers_) observer->onExec(pid, time);
  // The new image's own mappings come after the exec record; any already
  // here (from another CPU's ring) stay.
  std::erase_if(state->ranges, [&](const ExecutableMapping& range) { return range.time < time; });
  state->image_time = state->floor_time = time;
  state->complete = true;
  state->alive = true;
}

void MappingTable::exit(uint32_t pid, uint64_t time) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  ProcessMaps& state = it->second;
  if (!state.alive || time < state.image_time) return;  // a previous user of the pid
  state.alive = false;
  state.exit_time = time;
  for (MappingObserver* observer : observers_) observer->onExit(pid, time);
}

void MappingTable::markVanished(uint32_t pid, uint64_t time) {
  exit(pid, time);
}

void MappingTable::markAllIncomplete() {
  for (auto& [pid, state] : processes_) state.complete = false;
}

void MappingTable::loadSnapshot(uint32_t pid, std::vector<ExecutableMapping> now,
                                uint64_t read_time) {
  ProcessMaps* state = stateFor(pid, read_time, true);
  if (!state) return;
  for (ExecutableMapping& mapping : now) resolveVdso(mapping);
  std::sort(now.begin(), now.end(), [](const ExecutableMapping& a, const ExecutableMapping& b) {
    return a.start < b.start;
  });
  std::vector<ExecutableMapping>& old = state->ranges;
  std::vector<bool> kept(old.size(), false);
  std::vector<bool> fresh(now.size(), true);
  for (size_t i = 0; i < now.size(); ++i) {
    auto at = std::lower_bound(
        old.begin(), old.end(), now[i].start,
        [](const ExecutableMapping& range, uint64_t start) { return range.start < start; });
    if (at == old.end() || !sameMapping(*at, now[i])) continue;
    const auto j = static_cast<size_t>(at - old.begin());
    kept[j] = true;
    fresh[i] = false;
    now[i] = std::move(*at);  // keeps the record's time
  }
  for (size_t j = 0; j < old.size(); ++j) {
    if (kept[j]) continue;
    for (MappingObserver* observer : observers_)
      observer->onUnmap(pid, old[j].start, old[j].end, read_time);
  }
  state->ranges = std::move(now);
  for (size_t i = 0; i < state->ranges.size(); ++i) {
    if (fresh[i]) notifyMap(state->ranges[i]);
  }
  state->floor_time = std::max(state->floor_time, read_time);
  state->complete = true;
  state->alive = true;
}

const ExecutableMapping* MappingTable::find(uint32_t pid, uint64_t address) const {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return nullptr;
  const std::vector<ExecutableMapping>& ranges = it->second.ranges;
  auto after =
      std::upper_bound(ranges.begin(), ranges.end(), address,
                       [](uint64_t a, const ExecutableMapping& range) { return a < range.start; });
  if (after == ranges.begin()) return nullptr;
  --after;
  return address < after->end ? &*after : nullptr;
}

const std::vector<ExecutableMapping>* MappingTable::mappingsOf(uint32_t pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? nullptr : &it->second.ranges;
}

bool MappingTable::complete(uint32_t pid) const {
  auto it = processes_.find(pid);
  return it != processes_.end() && it->second.complete;
}

bool MappingTable::alive(uint32_t pid) const {
  auto it = processes_.find(pid);
  return it != processes_.end() && it->second.alive;
}

uint64_t MappingTable::imageTime(uint32_t pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? 0 : it->second.image_time;
}

void MappingTable::forgetExited(uint64_t time) {
  std::erase_if(processes_, [&](const auto& entry) {
    return !entry.second.alive && time > entry.second.exit_time + kRetentionNs;
  });
  // The table's own reference is the last one: no mapping (and no observer
  // that kept it) uses the object any more.
  std::erase_if(objects_, [](const auto& entry) { return entry.second.use_count() == 1; });
}

std::vector<uint32_t> MappingTable::pids() const {
  std::vector<uint32_t> out;
  out.reserve(processes_.size());
  for (const auto& [pid, state] : processes_) out.push_back(pid);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace incise::recorder
