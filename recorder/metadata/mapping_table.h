// MappingTable: the executable mappings of every process the recorder
// follows, as the kernel reports them, and the way other recorder parts hear
// about them.
//
// Mappings come from the kernel's mmap records (recorder/sources/mmap_source.h) for
// processes that start while recording, and from /proc/PID/maps for processes
// that were already running (ProcessTracker reads those once, at their first
// sighting). Only executable mappings are kept: stacks only land there. The
// table applies the process-life rules with the kernel's timestamps, so
// records that arrive out of order (they come from one ring per CPU) still
// give the right answer:
//
//   - exec at T ends every mapping made before T; a record older than the
//     current image (stale, from another CPU's ring) is dropped;
//   - fork copies the parent's mappings to the child;
//   - a new mapping over an old range ends the old one there (MAP_FIXED,
//     dlclose + dlopen at the same address);
//   - exit ends them all; the state is dropped kRetentionNs later (samples
//     still in the rings find it until then).
//
// A plain munmap leaves no kernel record, so a mapping unmapped without a
// later mapping over its range stays in the table until exec or exit. Every
// time is CLOCK_MONOTONIC ns, the clock of bpf_ktime_get_ns().
//
// Subscribing (everything runs on the recorder's poll-loop thread):
//
//   class UnwindTables : public MappingObserver {
//     void onMap(const ExecutableMapping& m) override {
//       if (!m.object->readable()) return;         // anonymous (JIT) code
//       int fd = openMappedFile(m);                // the exact file, or -1
//       ... load its unwind table for [m.start, m.end) of m.pid,
//           m.file_offset into the file, keyed by m.object->build_id ...
//     }
//     void onUnmap(uint32_t pid, uint64_t start, uint64_t end, uint64_t) override { ... }
//     void onExec(uint32_t pid, uint64_t) override { ... drop pid's tables ... }
//     void onExit(uint32_t pid, uint64_t) override { ... drop pid's tables ... }
//   };
//   UnwindTables tables;
//   tracker.mappings().subscribe(&tables);  // before the sources attach
//
// An observer hears a followed process's mappings as soon as the recorder
// drains them (the main loop drains the mmap records before the event rings,
// so at most ~100 ms after the mmap, and before any sample in the mapping is
// handled), a pre-existing process's when it is first sighted
// (ProcessTracker::notePid reads /proc/PID/maps then; call it yourself to
// learn a process earlier), and a forked child's as one onMap per mapping
// copied from its parent. With -a every process on the box is followed. The
// callbacks can run while an event is being handled: they must not call
// back into ProcessTracker.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace incise::recorder {

// The file (or special image) behind mappings; one per distinct object,
// shared by every mapping of it in every process.
struct MappedObject {
  // As the kernel names it: "/usr/lib/x86_64-linux-gnu/libc.so.6",
  // "/tmp/x.so (deleted)", "[vdso]", "//anon" (anonymous executable memory).
  std::string path;
  std::string build_id;  // raw bytes of the GNU build-id note; empty when unknown
  // A file the recorder can read, valid while the object is in use: the
  // vDSO image's copy (/proc/self/fd/N), empty otherwise (use the mapping's
  // open_path). See openMappedFile().
  std::string image_path;
  // A real file (not anonymous memory, not a special mapping like [vdso]).
  bool fileBacked() const;
  // The recorder can read it: a real file, or a special image it holds a
  // copy of (the vDSO).
  bool readable() const { return fileBacked() || !image_path.empty(); }
  bool deleted() const;  // the path ends in " (deleted)"
};

struct ExecutableMapping {
  uint32_t pid = 0;
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  uint64_t file_offset = 0;
  uint32_t prot = 0;  // PROT_READ | PROT_WRITE | PROT_EXEC
  // When it was mapped; mappings older than the recording carry the time the
  // recording began.
  uint64_t time = 0;
  // Where the recorder can open the file through the process (containers,
  // deleted files): /proc/PID/root/PATH or /proc/PID/map_files/START-END.
  // Valid while the process lives; empty for anonymous memory.
  std::string open_path;
  std::shared_ptr<const MappedObject> object;  // never null
};

// Where the recorder can read the object of `mapping`; empty for anonymous
// memory and special mappings it has no image of.
inline const std::string& readablePath(const ExecutableMapping& mapping) {
  return mapping.open_path.empty() ? mapping.object->image_path : mapping.open_path;
}

// The file of `mapping` opened read-only (O_CLOEXEC): through the process,
// else the vDSO copy, else the same path in the recorder's own mount
// namespace (the process is gone). -1 when none opens.
int openMappedFile(const ExecutableMapping& mapping);

class MappingObserver {
 public:
  virtual ~MappingObserver() = default;
  // A new executable mapping of a followed process.
  virtual void onMap(const ExecutableMapping& /*mapping*/) {}
  // [start, end) of `pid` stopped being the mapping onMap reported (a new
  // mapping now covers it; its onMap follows).
  virtual void onUnmap(uint32_t /*pid*/, uint64_t /*start*/, uint64_t /*end*/, uint64_t /*time*/) {}
  // `pid` replaced its image: every mapping it had is gone; the new image's
  // mappings follow (they may also have come just before, with later times).
  virtual void onExec(uint32_t /*pid*/, uint64_t /*time*/) {}
  // `pid` exited: every mapping it had is gone.
  virtual void onExit(uint32_t /*pid*/, uint64_t /*time*/) {}
};

class MappingTable {
 public:
  MappingTable() = default;
  MappingTable(const MappingTable&) = delete;
  MappingTable& operator=(const MappingTable&) = delete;

  // How long an exited process's mappings stay findable.
  static constexpr uint64_t kRetentionNs = 2'000'000'000;

  // `observer` must outlive the table or unsubscribe first.
  void subscribe(MappingObserver* observer);
  void unsubscribe(MappingObserver* observer);

  // The one object for this identity (interned; equal identities share it).
  std::shared_ptr<const MappedObject> object(const std::string& path, const std::string& build_id,
                                             const std::string& image_path = "");

  // Only processes already in the table (and their forked children) are
  // followed; records of others are ignored. Off by default: every process
  // a record names is followed (-a, a cgroup, -- CMD whose events the kernel
  // already filters).
  void setFollowOnlyKnown(bool only_known) { follow_only_known_ = only_known; }
  // Never followed (the recorder itself).
  void ignorePid(uint32_t pid) { ignored_pid_ = pid; }
  // The object every 64-bit process's "[vdso]" mapping is (the kernel maps
  // one image into all of them; 32-bit and x32 processes map theirs below
  // 4 GiB and keep a plain "[vdso]" object).
  void setVdso(std::shared_ptr<const MappedObject> image) { vdso_ = std::move(image); }

  // --- from the kernel's records, in (roughly) time order ---
  void map(ExecutableMapping mapping);
  void fork(uint32_t parent_pid, uint32_t child_pid, uint64_t time);
  void exec(uint32_t pid, uint64_t time);
  void exit(uint32_t pid, uint64_t time);
  // Records were lost: every process may now miss mappings.
  void markAllIncomplete();

  // --- from /proc/PID/maps ---
  // Every executable mapping `pid` had at `read_time` (taken before the
  // read): it replaces what the table held, except that mappings already
  // there (same range, offset and object) keep their record's time. Records
  // older than `read_time` that arrive later are dropped (what they say is
  // in the snapshot or was gone by then). Marks `pid` complete.
  void loadSnapshot(uint32_t pid, std::vector<ExecutableMapping> now, uint64_t read_time);

  // The mapping of `pid` containing `address`, or null.
  const ExecutableMapping* find(uint32_t pid, uint64_t address) const;
  // Every mapping of `pid`, by start address.
  const std::vector<ExecutableMapping>* mappingsOf(uint32_t pid) const;
  bool follows(uint32_t pid) const { return processes_.count(pid) != 0; }
  // True when the table holds every executable mapping of `pid`: it started
  // (fork of a complete parent, or exec) while records flowed, or its
  // /proc/PID/maps was read, and no record was lost since.
  bool complete(uint32_t pid) const;
  bool alive(uint32_t pid) const;
  // When `pid`'s current image began (its fork or exec); 0 when older than
  // the recording or unknown.
  uint64_t imageTime(uint32_t pid) const;

  // Drops processes that exited more than kRetentionNs before `time` and
  // objects no mapping uses any more.
  void forgetExited(uint64_t time);
  // Marks `pid` exited at `time` if it is still alive (it vanished unseen).
  void markVanished(uint32_t pid, uint64_t time);
  std::vector<uint32_t> pids() const;
  size_t processCount() const { return processes_.size(); }
  size_t objectCount() const { return objects_.size(); }
  uint64_t staleRecords() const { return stale_records_; }

 private:
  struct ProcessMaps {
    std::vector<ExecutableMapping> ranges;  // sorted by start, never overlapping
    uint64_t image_time = 0;                // the fork or exec that began this image
    uint64_t floor_time = 0;  // records older than this are stale (image_time or a snapshot)
    bool complete = false;
    bool alive = true;
    uint64_t exit_time = 0;
  };

  ProcessMaps* stateFor(uint32_t pid, uint64_t time, bool create);
  // Removes [start, end) from `state`'s ranges (telling observers).
  void cut(uint32_t pid, ProcessMaps& state, uint64_t start, uint64_t end, uint64_t time);
  void insert(ProcessMaps& state, ExecutableMapping mapping);
  void notifyMap(const ExecutableMapping& mapping);
  // "[vdso]" of a 64-bit process -> the vDSO image's object.
  void resolveVdso(ExecutableMapping& mapping) const;

  std::unordered_map<uint32_t, ProcessMaps> processes_;
  std::unordered_map<std::string, std::shared_ptr<const MappedObject>> objects_;
  std::vector<MappingObserver*> observers_;
  std::shared_ptr<const MappedObject> vdso_;
  bool follow_only_known_ = false;
  uint32_t ignored_pid_ = 0;
  uint64_t stale_records_ = 0;
};

}  // namespace incise::recorder
