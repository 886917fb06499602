// UnwindTableLoader: see unwind_table_loader.h.
#include "recorder/metadata/unwind_table_loader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elf.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <list>
#include <map>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "base/unique_fd.h"
#include "bpf/events.h"
#include "bpf/unwind_table.h"
#include "format/metadata.h"
#include "objfile/unwind_tables.h"
#include "recorder/capabilities.h"
#include "recorder/libbpf_error.h"
#include "recorder/libbpf_options.h"
#include "recorder/metadata/process_image.h"
#include "recorder/metadata/unwind_rows.h"
#include "recorder/per_cpu_sums.h"

namespace incise::recorder {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kWorkerNice = -10;
// Processes that went away without a request are noticed this often.
constexpr auto kSweepInterval = std::chrono::seconds(1);
// A pc outside every mapping re-reads the maps (a library mapped since), but
// not for a page that was still unmapped after a re-read: such pcs come from
// frame-pointer steps through code that keeps no frame pointer.
constexpr size_t kMaxUnmappedPages = 4096;
// Rows of an object no process maps any more are reused once this long has
// passed, well past any walk that found the mapping before it went.
constexpr auto kRowQuarantine = std::chrono::milliseconds(200);
constexpr int64_t kRetryWindowMs = UNWIND_REQUEST_RETRY_NS / 1000000;

struct FileKey {
  uint64_t device = 0, inode = 0;
  bool operator==(const FileKey&) const = default;
};
struct FileKeyHash {
  size_t operator()(const FileKey& key) const {
    return std::hash<uint64_t>()(key.device * 0x9e3779b97f4a7c15ull ^ key.inode);
  }
};

// One object's rows in the shared array.
struct Table {
  uint32_t block = 0;  // first element of its block: page index, then rows
  uint32_t block_elements = 0;
  uint32_t first_row = 0;
  uint32_t id = 0;    // unwind_mapping.table
  uint32_t rows = 0;  // 0: no rows (frame-pointer steps): none fit, no .eh_frame, unreadable
  uint64_t page_base = 0;
  uint32_t pages = 0;
  std::vector<format::Segment> load_segments;
  std::string path;
  uint32_t users = 0;  // process mappings naming it
  Clock::time_point unused_since{};
};

// Free ranges of the rows array, first fit; a freed range waits out the
// quarantine before reuse.
class RowAllocator {
 public:
  explicit RowAllocator(uint32_t capacity) : capacity_(capacity) {}

  std::optional<uint32_t> allocate(uint32_t rows, Clock::time_point now) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->count < rows || now - it->freed < kRowQuarantine) continue;
      uint32_t first = it->first;
      it->first += rows;
      it->count -= rows;
      if (it->count == 0) free_.erase(it);
      used_ += rows;
      return first;
    }
    if (capacity_ - next_ < rows) return std::nullopt;
    uint32_t first = next_;
    next_ += rows;
    used_ += rows;
    return first;
  }
  void release(uint32_t first, uint32_t rows, Clock::time_point now) {
    if (rows == 0) return;
    free_.push_back(Range{first, rows, now});
    used_ -= rows;
  }
  uint32_t used() const { return used_; }

 private:
  struct Range {
    uint32_t first, count;
    Clock::time_point freed;
  };
  uint32_t capacity_;
  uint32_t next_ = 0;
  uint32_t used_ = 0;
  std::list<Range> free_;
};

struct Process {
  uint64_t start_stack = 0;
  uint32_t chunks = 0;
  std::vector<FileKey> tables;  // one per mapping that names a file table
  std::unordered_set<uint64_t> unmapped_pages;
  // build_on_first_walk: the maps last read (an object a walk asks for is
  // built and published from them, without reading them again), and the
  // objects asked for already (never marked unbuilt again: an object whose
  // file cannot be read would otherwise be asked for at every walk).
  ProcessImage image;
  std::unordered_set<FileKey, FileKeyHash> asked;
};

// The vDSO is the same image in every 64-bit process of this kernel.
std::string readOwnVdso() {
  auto* base = reinterpret_cast<const uint8_t*>(getauxval(AT_SYSINFO_EHDR));
  if (base == nullptr) return {};
  Elf64_Ehdr header;
  std::memcpy(&header, base, sizeof(header));
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_phentsize != sizeof(Elf64_Phdr))
    return {};
  // Its extent: the end of its last loaded segment, and of its section headers.
  uint64_t size = header.e_shoff + uint64_t{header.e_shnum} * header.e_shentsize;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr phdr;
    std::memcpy(&phdr, base + header.e_phoff + i * sizeof(phdr), sizeof(phdr));
    if (phdr.p_type == PT_LOAD) size = std::max<uint64_t>(size, phdr.p_offset + phdr.p_filesz);
  }
  if (size > (1u << 20)) return {};
  return std::string(reinterpret_cast<const char*>(base), size);
}

// Maps put in the one-slot handles of BPF objects. Every update of a
// map-of-maps slot waits for an RCU grace period (the kernel makes sure no
// program still sees the old map), 10-50 ms on a busy machine, and four
// handles in each of several objects filled one after another kept start-up
// waiting ~90 ms. Made at once, a thread each, the updates share the grace
// period, and the caller does its own work meanwhile.
class SlotUpdates {
 public:
  void add(const char* name, int handle_fd, int map_fd) {
    slots_.push_back(Slot{.name = name, .handle_fd = handle_fd, .map_fd = map_fd});
  }
  // After the last add.
  void start() {
    for (Slot& slot : slots_) {
      threads_.emplace_back([&slot] {
        uint32_t zero = 0;
        if (bpf_map_update_elem(slot.handle_fd, &zero, &slot.map_fd, BPF_ANY) != 0)
          slot.error = errno;
      });
    }
  }
  Status join() {
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    for (const Slot& slot : slots_) {
      if (slot.error != 0)
        return libbpfError(std::string("unwind tables: share ") + slot.name, slot.error);
    }
    return Status::ok();
  }
  ~SlotUpdates() { (void)join(); }

 private:
  struct Slot {
    const char* name;
    int handle_fd;
    int map_fd;
    int error = 0;
  };
  std::vector<Slot> slots_;
  std::vector<std::thread> threads_;
};

}  // namespace

class UnwindTableLoader::Impl {
 public:
  explicit Impl(UnwindLoaderOptions options)
      : options_(std::move(options)), allocator_(options_.row_capacity) {}
  ~Impl() { stop(); }

  Status start(std::span<const bpf_object* const> objects) {
    if (options_.row_capacity == 0 || options_.row_capacity > UNWIND_MAX_ROWS)
      return Error("unwind tables: row capacity " + std::to_string(options_.row_capacity) +
                   " is outside 1.." + std::to_string(UNWIND_MAX_ROWS));
    auto rows_opts = libbpfOptions<bpf_map_create_opts>();
    rows_opts.map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE;
    rows_fd_ = UniqueFd(bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(uint32_t),
                                       sizeof(unwind_row_slot), options_.row_capacity, &rows_opts));
    if (!rows_fd_) return libbpfError("unwind tables: create the rows array", errno);
    auto processes_opts = libbpfOptions<bpf_map_create_opts>();
    processes_opts.map_flags = BPF_F_NO_PREALLOC;
    processes_fd_ = UniqueFd(
        bpf_map_create(BPF_MAP_TYPE_HASH, "unwind_procs", sizeof(unwind_process_key),
                       sizeof(unwind_process_chunk), UNWIND_MAX_PROCESS_CHUNKS, &processes_opts));
    if (!processes_fd_) return libbpfError("unwind tables: create the process table", errno);
    requests_fd_ = UniqueFd(bpf_map_create(BPF_MAP_TYPE_HASH, "unwind_reqs", sizeof(uint32_t),
                                           sizeof(unwind_request), UNWIND_MAX_REQUESTS, nullptr));
    if (!requests_fd_) return libbpfError("unwind tables: create the request table", errno);
    wakeups_fd_ = UniqueFd(bpf_map_create(BPF_MAP_TYPE_RINGBUF, "unwind_wakeups", 0, 0,
                                          UNWIND_WAKEUP_RING_BYTES, nullptr));
    if (!wakeups_fd_) return libbpfError("unwind tables: create the wake-up ring", errno);
    wakeups_.reset(ring_buffer__new(
        wakeups_fd_.get(), [](void*, void*, size_t) { return 0; }, nullptr, nullptr));
    if (wakeups_ == nullptr) return libbpfError("unwind tables: read the wake-up ring", errno);
    epoll_fd_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
    stop_fd_ = UniqueFd(eventfd(0, EFD_CLOEXEC));
    if (!epoll_fd_ || !stop_fd_) return libbpfError("unwind tables: epoll", errno);
    for (int fd : {ring_buffer__epoll_fd(wakeups_.get()), stop_fd_.get()}) {
      epoll_event event{.events = EPOLLIN, .data = {.fd = fd}};
      if (epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &event) != 0)
        return libbpfError("unwind tables: epoll", errno);
    }

    // No program is attached yet, so the process table, which turns CFI
    // walks on, need not come last.
    SlotUpdates slots;
    for (const bpf_object* object : objects) {
      if (object == nullptr) continue;
      for (auto [name, fd] : {std::pair<const char*, int>{"unwind_rows", rows_fd_.get()},
                              {"unwind_requests", requests_fd_.get()},
                              {"unwind_wakeups", wakeups_fd_.get()},
                              {"unwind_processes", processes_fd_.get()}}) {
        const bpf_map* handle = bpf_object__find_map_by_name(object, name);
        if (handle == nullptr)
          return Error(std::string("unwind tables: a BPF object has no ") + name);
        slots.add(name, bpf_map__fd(handle), fd);
      }
      // A copy: a source that fails to attach destroys its object.
      if (const bpf_map* stats = bpf_object__find_map_by_name(object, "unwind_stats")) {
        int copy = fcntl(bpf_map__fd(stats), F_DUPFD_CLOEXEC, 0);
        if (copy >= 0) stats_fds_.emplace_back(copy);
      }
    }
    slots.start();
    std::string vdso = readOwnVdso();
    if (!vdso.empty()) {
      Result<ObjectUnwindRows> rows = unwindRowsFromImage(vdso, "[vdso]");
      if (rows) vdso_ = storeTable(rows.take(), "[vdso]");
    }
    if (Result<ProcessImage> own = readProcessImage("/proc", static_cast<uint32_t>(getpid()))) {
      own_start_stack_ = own->start_stack;
      primeSharedLibraries(*own);
    }
    for (uint32_t pid : options_.initial_pids)
      handle(pid, unwind_request{.reasons = UNWIND_REQUEST_UNKNOWN_PROCESS});
    INCISE_RETURN_IF_ERROR(slots.join());
    worker_ = std::thread([this] { run(); });
    return Status::ok();
  }

  void stop() {
    if (!worker_.joinable()) return;
    uint64_t one = 1;
    (void)!write(stop_fd_.get(), &one, sizeof(one));
    worker_.join();
    readWalkStats();
  }

  UnwindSummary summary() const {
    UnwindSummary out = summary_;
    out.row_capacity = options_.row_capacity;
    out.rows = allocator_.used();
    out.objects = 0;
    out.objects_without_rows = 0;
    out.never_walked = static_cast<uint64_t>(
        std::count_if(never_walked_.begin(), never_walked_.end(),
                      [&](const FileKey& key) { return tables_.count(key) == 0; }));
    for (const auto& [key, table] : tables_)
      (table.rows ? out.objects : out.objects_without_rows)++;
    return out;
  }

  std::vector<std::string> notes() const {
    UnwindSummary s = summary();
    std::vector<std::string> out;
    char line[768];
    auto share = [&](uint64_t part) { return s.walks ? 100.0 * part / s.walks : 0.0; };
    std::snprintf(line, sizeof(line),
                  "user stacks: unwound in the kernel from .eh_frame (-g cfi): %lu walks, %.1f%% "
                  "ended at the outermost frame (_start, clone3), %.1f%% at a zero return "
                  "address, %.1f%% at %d frames, %.1f%% at unreadable stack, %.1f%% at a bad "
                  "frame, %.1f%% at an unsupported rule, %.1f%% at a return address without CFI; "
                  "%lu frames by CFI (%lu rows not in the row cache), %lu by frame pointer; "
                  "%lu stacks walked by frame pointer before their process's tables were in",
                  (unsigned long)s.walks, share(s.ends[UNWIND_END_OUTERMOST]),
                  share(s.ends[UNWIND_END_ZERO_PC]), share(s.ends[UNWIND_END_DEPTH]),
                  MAX_STACK_DEPTH, share(s.ends[UNWIND_END_READ_FAILED]),
                  share(s.ends[UNWIND_END_BAD_FRAME]), share(s.ends[UNWIND_END_UNSUPPORTED]),
                  share(s.ends[UNWIND_END_NO_CFI]), (unsigned long)s.cfi_frames,
                  (unsigned long)s.row_misses, (unsigned long)s.fp_frames,
                  (unsigned long)s.ends[UNWIND_END_NO_PROCESS]);
    out.push_back(line);
    std::snprintf(line, sizeof(line),
                  "unwind tables: %lu objects, %lu rows (%.1f MiB of %.1f), %lu objects without "
                  "rows; %lu processes, %lu maps reads",
                  (unsigned long)s.objects, (unsigned long)s.rows, s.rows * 8.0 / (1 << 20),
                  s.row_capacity * 8.0 / (1 << 20), (unsigned long)s.objects_without_rows,
                  (unsigned long)s.processes, (unsigned long)s.map_reads);
    out.push_back(line);
    std::snprintf(line, sizeof(line),
                  "unwind tables: %lu mappings shared rows built before (each object's rows "
                  "are built once)",
                  (unsigned long)s.shared_uses);
    out.push_back(line);
    if (options_.build_on_first_walk) {
      std::snprintf(line, sizeof(line),
                    "unwind tables: rows built when a walk first reached the object: %lu "
                    "objects; %lu objects mapped but never reached (never built); %lu frames "
                    "stepped by frame pointer before their object's rows were in",
                    (unsigned long)s.built_on_walk, (unsigned long)s.never_walked,
                    (unsigned long)s.unbuilt_frames);
      out.push_back(line);
    }
    if (!latencies_ns_.empty()) {
      std::vector<uint64_t> sorted = latencies_ns_;
      std::sort(sorted.begin(), sorted.end());
      std::snprintf(line, sizeof(line),
                    "unwind tables: a new process's tables were in %.1f ms after its first walk "
                    "(median of %zu; max %.1f ms)",
                    sorted[sorted.size() / 2] / 1e6, sorted.size(), sorted.back() / 1e6);
      out.push_back(line);
    }
    for (const std::string& problem : problems_) out.push_back("unwind tables: " + problem);
    return out;
  }

 private:
  // Sleeps until a BPF program files a new request (a record in the wake-up
  // ring) or a sweep is due; nothing runs while no process is new.
  void run() {
    // Until a new process's tables are in, its stacks are frame-pointer
    // walks: on a busy box this thread must not wait behind the recorded
    // work (load 13 on 2 CPUs: 0.4-75 ms from a first walk to its tables at
    // nice 0). Its bursts are short: a maps read, and the rows of objects
    // not seen before.
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kWorkerNice);
    // Capabilities are per thread: this one gives up what the recorder's
    // main thread gives up once attached (it parses other programs' files).
    if (Status dropped = dropCapabilitiesAfterAttach(); !dropped) problem(dropped.message());
    auto last_sweep = Clock::now();
    bool answered = false;
    for (;;) {
      // Right after an answer, walks that ask again within the retry window
      // do not wake this thread (bpf/unwind_table.h): look again once it has
      // passed (a library a new process maps just after its first answer).
      auto timeout = answered ? std::chrono::milliseconds(kRetryWindowMs)
                              : std::chrono::milliseconds(kSweepInterval);
      epoll_event ready[2];
      int count = epoll_wait(epoll_fd_.get(), ready, 2, static_cast<int>(timeout.count()));
      bool stopping = false;
      for (int i = 0; i < count; ++i) stopping |= ready[i].data.fd == stop_fd_.get();
      if (stopping) return;
      if (wakeups_ != nullptr) ring_buffer__consume(wakeups_.get());
      answered = drainRequests();
      auto now = Clock::now();
      if (now - last_sweep >= kSweepInterval) {
        sweepGoneProcesses(now);
        last_sweep = now;
      }
    }
  }

  // Every entry of the request table (one per process that asked, kept
  // while it lives: hundreds on a busy machine), read at every wake-up: in
  // batches, one syscall per kRequestBatch entries instead of two per entry
  // (one by one where the kernel refuses batches).
  void readRequests(std::vector<std::pair<uint32_t, unwind_request>>& out) {
    out.clear();
    request_keys_.resize(kRequestBatch);
    request_values_.resize(kRequestBatch);
    uint32_t batch = 0;
    for (bool first = true;; first = false) {
      uint32_t count = kRequestBatch;
      int failed =
          bpf_map_lookup_batch(requests_fd_.get(), first ? nullptr : &batch, &batch,
                               request_keys_.data(), request_values_.data(), &count, nullptr);
      int error = failed ? errno : 0;
      if (failed && error != ENOENT) break;
      for (uint32_t i = 0; i < count && i < kRequestBatch; ++i)
        out.emplace_back(request_keys_[i], request_values_[i]);
      if (failed) return;  // ENOENT: that was the last batch
    }
    out.clear();
    uint32_t key = 0, next = 0;
    bool first = true;
    while (bpf_map_get_next_key(requests_fd_.get(), first ? nullptr : &key, &next) == 0) {
      first = false;
      unwind_request request{};
      if (bpf_map_lookup_elem(requests_fd_.get(), &next, &request) == 0)
        out.emplace_back(next, request);
      key = next;
    }
  }

  // True when it answered a request.
  bool drainRequests() {
    std::vector<std::pair<uint32_t, unwind_request>>& requests = requests_read_;
    readRequests(requests);
    bool any = false;
    for (auto& [pid, request] : requests) {
      if (request.reasons == 0) continue;  // answered before
      any = true;
      unwind_request answered = request;
      answered.reasons = 0;
      answered.answered = monotonicNs();
      bpf_map_update_elem(requests_fd_.get(), &pid, &answered, BPF_EXIST);
      if (!handle(pid, request)) bpf_map_delete_elem(requests_fd_.get(), &pid);  // gone
    }
    return any;
  }

  static uint64_t monotonicNs() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
  }

  // False when the process is gone.
  bool handle(uint32_t pid, const unwind_request& request) {
    struct Measured {
      Impl* impl;
      uint64_t asked;
      ~Measured() {
        uint64_t now = monotonicNs();
        if (asked != 0 && now > asked && impl->latencies_ns_.size() < kMaxLatencies)
          impl->latencies_ns_.push_back(now - asked);
      }
    } measured{this, request.reasons & UNWIND_REQUEST_UNKNOWN_PROCESS ? request.time : 0};
    auto known = processes_.find(pid);
    if (known != processes_.end() && request.reasons == UNWIND_REQUEST_UNMAPPED_PC &&
        known->second.unmapped_pages.count(request.pc >> 12))
      return true;
    std::optional<uint64_t> object_pc;
    if (request.reasons & UNWIND_REQUEST_OBJECT) object_pc = request.pc;
    // Only an object to build: from the maps already read.
    if (known != processes_.end() && known->second.chunks != 0 &&
        request.reasons == UNWIND_REQUEST_OBJECT) {
      Process& process = known->second;
      ProcessImage image = process.image;
      publish(pid, process, image, object_pc);
      return true;
    }
    Result<ProcessImage> image = readProcessImage(options_.proc_root, pid);
    ++summary_.map_reads;
    if (!image) return false;  // gone: a late request
    // The recorder itself, or a fork of it waiting to exec the command (--
    // CMD): walked by frame pointer (the recorder keeps them), so that the
    // command's tables, needed the moment it execs, are not delayed by the
    // recorder's.
    if (image->start_stack == own_start_stack_) {
      publishFramePointersOnly(pid, processes_[pid], *image);
      return true;
    }
    Process& process = processes_[pid];
    if (request.reasons & UNWIND_REQUEST_UNMAPPED_PC) {
      bool covered = std::any_of(
          image->mappings.begin(), image->mappings.end(),
          [&](const ExecMapping& m) { return request.pc >= m.start && request.pc < m.end; });
      if (!covered && process.unmapped_pages.size() < kMaxUnmappedPages)
        process.unmapped_pages.insert(request.pc >> 12);
    }
    publish(pid, process, *image, object_pc);
    return true;
  }

  void publishFramePointersOnly(uint32_t pid, Process& process, const ProcessImage& image) {
    unwind_process_chunk chunk;
    std::memset(&chunk, 0, sizeof(chunk));
    chunk.chunks = 1;
    chunk.flags = UNWIND_PROCESS_FRAME_POINTERS;
    chunk.start_stack = image.start_stack;
    unwind_process_key key{.pid = pid, .chunk = 0};
    if (bpf_map_update_elem(processes_fd_.get(), &key, &chunk, BPF_ANY) != 0) return;
    for (uint32_t c = 1; c < process.chunks; ++c) {
      unwind_process_key extra{.pid = pid, .chunk = c};
      bpf_map_delete_elem(processes_fd_.get(), &extra);
    }
    releaseTables(process, Clock::now());
    process.chunks = 1;
    process.start_stack = image.start_stack;
  }

  // The system libraries the recorder maps itself (libc, ld.so, libstdc++,
  // libm, libgcc_s...) are what nearly every process maps too: their rows
  // are built now, so a process that starts during the recording has them
  // the moment it maps them (libc alone: ~7 ms of a loaded CPU).
  void primeSharedLibraries(const ProcessImage& own) {
    uint32_t self = static_cast<uint32_t>(getpid());
    for (const ExecMapping& mapping : own.mappings) {
      if (!mapping.fileBacked() || mapping.path.find(".so") == std::string::npos) continue;
      FileKey key;
      Table* table = tableFor(self, mapping, key);
      if (table != &unreadable_) table->unused_since = Clock::now() - kRowQuarantine;
    }
  }

  // The table of one mapping's file, built on first sight.
  Table* tableFor(uint32_t pid, const ExecMapping& mapping, FileKey& key) {
    key = FileKey{mapping.device, mapping.inode};
    auto found = tables_.find(key);
    if (found != tables_.end()) return &found->second;
    std::string dir = options_.proc_root + "/" + std::to_string(pid);
    char range[64];
    std::snprintf(range, sizeof(range), "/map_files/%lx-%lx", (unsigned long)mapping.start,
                  (unsigned long)mapping.end);
    // The file the process mapped, whatever its path now names: through the
    // process's root (containers), checked by device and inode; else
    // map_files (deleted files; needs CAP_SYS_ADMIN, which the recorder
    // drops once attached).
    // The same file in the recorder's own mount namespace serves too, once
    // the process is gone (short-lived processes of a whole-machine recording).
    UniqueFd fd;
    for (const std::string& candidate :
         {mapping.deleted() ? std::string() : dir + "/root" + mapping.path, dir + range,
          mapping.deleted() ? std::string() : mapping.path}) {
      if (candidate.empty()) continue;
      UniqueFd opened(open(candidate.c_str(), O_RDONLY | O_CLOEXEC));
      struct stat info {};
      if (!opened || fstat(opened.get(), &info) != 0 || info.st_ino != mapping.inode ||
          info.st_dev != mapping.device)
        continue;
      fd = std::move(opened);
      break;
    }
    ObjectUnwindRows rows;
    if (fd) {
      Result<ObjectUnwindRows> read =
          readObjectUnwindRows("/proc/self/fd/" + std::to_string(fd.get()));
      if (read) {
        rows = read.take();
      } else {
        problem(mapping.path + ": " + read.error().message());
      }
    } else {
      // Not remembered: another process mapping it may still be readable.
      problem(mapping.path + ": cannot open the mapped file");
      unreadable_ = Table{.path = mapping.path};
      return &unreadable_;
    }
    Table table = storeTable(std::move(rows), mapping.path);
    table.unused_since = Clock::now();
    return &tables_.emplace(key, std::move(table)).first->second;
  }

  Table storeTable(ObjectUnwindRows object, const std::string& path) {
    Table table;
    table.path = path;
    table.load_segments = std::move(object.load_segments);
    if (object.rows.empty() || object.rows.size() > UNWIND_MAX_ROWS) return table;
    UnwindBlockLayout block = unwindBlockLayout(object.rows);
    table.page_base = block.page_base;
    table.pages = block.pages;
    uint32_t count = static_cast<uint32_t>(block.elements);
    auto now = Clock::now();
    std::optional<uint32_t> first = allocator_.allocate(count, now);
    if (!first) {
      evictUnused(now);
      first = allocator_.allocate(count, now);
    }
    if (!first) {
      problem(path + ": the rows array is full (" + std::to_string(options_.row_capacity) +
              " rows); unwound by frame pointer");
      return Table{.load_segments = std::move(table.load_segments), .path = path};
    }
    if (Status written = writeBlock(*first, object.rows, block); !written) {
      allocator_.release(*first, count, now - kRowQuarantine);
      problem(path + ": " + written.message());
      return Table{.load_segments = std::move(table.load_segments), .path = path};
    }
    table.block = *first;
    table.block_elements = count;
    table.first_row = *first + block.index_elements;
    table.id = ++last_table_id_;
    table.rows = static_cast<uint32_t>(object.rows.size());
    if (options_.verbose)
      std::fprintf(stderr, "incise-record: unwind rows of %s: %u (%lu FDEs, %lu unsupported)\n",
                   path.c_str(), table.rows, (unsigned long)object.fdes,
                   (unsigned long)object.unsupported_rows);
    return table;
  }

  // An object's block into the array through a window mapped for this
  // write only (kept mapped, every row written would count in the
  // recorder's RSS), filled in place.
  Status writeBlock(uint32_t first, std::span<const unwind_row> rows,
                    const UnwindBlockLayout& layout) {
    constexpr size_t kPage = 4096;
    size_t begin = size_t{first} * sizeof(unwind_row_slot);
    size_t end = begin + layout.elements * sizeof(unwind_row_slot);
    size_t window_begin = begin & ~(kPage - 1);
    size_t window_bytes = ((end + kPage - 1) & ~(kPage - 1)) - window_begin;
    void* window = mmap(nullptr, window_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, rows_fd_.get(),
                        static_cast<off_t>(window_begin));
    if (window == MAP_FAILED) return libbpfError("map the rows array", errno);
    fillUnwindBlock(
        rows, layout,
        reinterpret_cast<unwind_row_slot*>(static_cast<char*>(window) + (begin - window_begin)));
    munmap(window, window_bytes);
    return Status::ok();
  }

  // Frees the rows of objects no process has mapped for a while.
  void evictUnused(Clock::time_point now) {
    for (auto it = tables_.begin(); it != tables_.end();) {
      Table& table = it->second;
      if (table.users == 0 && table.rows != 0 && now - table.unused_since >= kRowQuarantine) {
        allocator_.release(table.block, table.block_elements, now - kRowQuarantine);
        it = tables_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // `object_pc`: a walk asked for the object mapped there (build_on_first_walk).
  void publish(uint32_t pid, Process& process, const ProcessImage& image,
               std::optional<uint64_t> object_pc = std::nullopt) {
    bool lazy = options_.build_on_first_walk;
    if (lazy && object_pc) {
      for (const ExecMapping& m : image.mappings) {
        if (!m.fileBacked() || *object_pc < m.start || *object_pc >= m.end) continue;
        FileKey key{m.device, m.inode};
        process.asked.insert(key);
        if (tables_.count(key) == 0) {
          tableFor(pid, m, key);
          ++summary_.built_on_walk;
        }
      }
    }
    std::unordered_set<FileKey, FileKeyHash> before(process.tables.begin(), process.tables.end());
    std::vector<unwind_mapping> mappings;
    std::vector<FileKey> used;
    for (const ExecMapping& m : image.mappings) {
      unwind_mapping entry{.start = m.start, .end = m.end};
      const Table* table = nullptr;
      if (m.fileBacked()) {
        FileKey key{m.device, m.inode};
        bool built = tables_.count(key) != 0;
        if (lazy && !built && process.asked.count(key) == 0) {
          entry.flags = UNWIND_MAPPING_UNBUILT;
          never_walked_.insert(key);
          mappings.push_back(entry);
          if (mappings.size() == UNWIND_CHUNK_MAPPINGS * UNWIND_MAX_CHUNKS) break;
          continue;
        }
        Table* file_table = tableFor(pid, m, key);
        // Counted at once: loading a later mapping's table may evict unused ones.
        if (file_table->rows) {
          ++file_table->users;
          used.push_back(key);
          if (built && before.count(key) == 0) ++summary_.shared_uses;
        }
        table = file_table;
      } else if (m.path == "[vdso]" && vdso_.rows) {
        table = &vdso_;
      }
      if (table != nullptr && table->rows) {
        std::optional<uint64_t> bias =
            objfile::loadBias(table->load_segments, m.start, m.end, m.offset);
        if (bias) {
          entry.bias = *bias;
          entry.first_row = table->first_row;
          entry.table = table->id;
          entry.rows = table->rows;
          entry.page_base = table->page_base;
          entry.page_index = table->block;
          entry.pages = table->pages;
        }
      }
      mappings.push_back(entry);
      if (mappings.size() == UNWIND_CHUNK_MAPPINGS * UNWIND_MAX_CHUNKS) break;
    }
    uint32_t chunks = static_cast<uint32_t>(
        std::max<size_t>(1, (mappings.size() + UNWIND_CHUNK_MAPPINGS - 1) / UNWIND_CHUNK_MAPPINGS));
    std::vector<unwind_process_chunk> values(chunks);
    for (uint32_t c = 0; c < chunks; ++c) {
      unwind_process_chunk& chunk = values[c];
      std::memset(&chunk, 0, sizeof(chunk));
      size_t begin = size_t{c} * UNWIND_CHUNK_MAPPINGS;
      size_t end = std::min(mappings.size(), begin + UNWIND_CHUNK_MAPPINGS);
      chunk.mappings = static_cast<uint32_t>(end - begin);
      std::copy(mappings.begin() + begin, mappings.begin() + end, chunk.mapping);
      values[0].chunk_start[c] = begin < mappings.size() ? mappings[begin].start : 0;
    }
    values[0].chunks = chunks;
    values[0].start_stack = image.start_stack;
    // Later chunks first: chunk 0 is what a walk reads first.
    for (uint32_t c = chunks; c-- > 0;) {
      unwind_process_key key{.pid = pid, .chunk = c};
      if (bpf_map_update_elem(processes_fd_.get(), &key, &values[c], BPF_ANY) != 0) {
        problem("process " + std::to_string(pid) + ": " + std::strerror(errno));
        Process failed{.tables = std::move(used)};
        releaseTables(failed, Clock::now());
        return;
      }
    }
    for (uint32_t c = chunks; c < process.chunks; ++c) {
      unwind_process_key key{.pid = pid, .chunk = c};
      bpf_map_delete_elem(processes_fd_.get(), &key);
    }
    if (process.chunks == 0) ++summary_.processes;
    releaseTables(process, Clock::now());
    process.tables = std::move(used);
    process.chunks = chunks;
    process.start_stack = image.start_stack;
    if (lazy && &process.image != &image) process.image = image;
  }

  void releaseTables(Process& process, Clock::time_point now) {
    for (const FileKey& key : process.tables) {
      auto it = tables_.find(key);
      if (it == tables_.end() || it->second.users == 0) continue;
      if (--it->second.users == 0) it->second.unused_since = now;
    }
    process.tables.clear();
  }

  void sweepGoneProcesses(Clock::time_point now) {
    for (auto it = processes_.begin(); it != processes_.end();) {
      uint32_t pid = it->first;
      if (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) {
        ++it;
        continue;
      }
      for (uint32_t c = 0; c < it->second.chunks; ++c) {
        unwind_process_key key{.pid = pid, .chunk = c};
        bpf_map_delete_elem(processes_fd_.get(), &key);
      }
      bpf_map_delete_elem(requests_fd_.get(), &pid);
      releaseTables(it->second, now);
      it = processes_.erase(it);
    }
  }

  void readWalkStats() {
    uint64_t totals[UNWIND_STAT_SLOTS] = {};
    for (const UniqueFd& stats : stats_fds_) {
      const std::vector<uint64_t> sums = sumPerCpuSlots(stats.get(), UNWIND_STAT_SLOTS);
      for (uint32_t slot = 0; slot < UNWIND_STAT_SLOTS; ++slot) totals[slot] += sums[slot];
    }
    summary_.walks = 0;
    for (uint32_t end = 0; end < UNWIND_END_KINDS; ++end) {
      summary_.ends[end] = totals[end];
      if (end != UNWIND_END_NO_PROCESS) summary_.walks += totals[end];
    }
    summary_.cfi_frames = totals[UNWIND_STAT_CFI_FRAMES];
    summary_.fp_frames = totals[UNWIND_STAT_FP_FRAMES];
    summary_.unbuilt_frames = totals[UNWIND_STAT_UNBUILT_FRAMES];
    summary_.row_misses = totals[UNWIND_STAT_ROW_MISSES];
  }

  void problem(std::string text) {
    constexpr size_t kMaxProblems = 32;
    if (problems_.size() < kMaxProblems &&
        std::find(problems_.begin(), problems_.end(), text) == problems_.end())
      problems_.push_back(std::move(text));
  }

  UnwindLoaderOptions options_;
  UniqueFd rows_fd_, processes_fd_, requests_fd_;
  std::vector<UniqueFd> stats_fds_;
  RowAllocator allocator_;
  std::unordered_map<FileKey, Table, FileKeyHash> tables_;
  Table vdso_;
  Table unreadable_;  // what tableFor returns for a file it could not open
  uint64_t own_start_stack_ = 0;
  std::unordered_map<uint32_t, Process> processes_;
  // build_on_first_walk: objects marked unbuilt that no walk has asked for yet.
  std::unordered_set<FileKey, FileKeyHash> never_walked_;
  std::vector<std::string> problems_;
  UnwindSummary summary_;
  // readRequests' buffers, kept from one wake-up to the next. A batch must
  // hold a whole hash bucket (a handful of entries at most).
  static constexpr uint32_t kRequestBatch = 1024;
  std::vector<uint32_t> request_keys_;
  std::vector<unwind_request> request_values_;
  std::vector<std::pair<uint32_t, unwind_request>> requests_read_;
  // From a new process's first walk to its tables being in (ns).
  static constexpr size_t kMaxLatencies = 1u << 16;
  std::vector<uint64_t> latencies_ns_;

  struct RingDeleter {
    void operator()(ring_buffer* ring) const { ring_buffer__free(ring); }
  };
  UniqueFd wakeups_fd_, epoll_fd_, stop_fd_;
  std::unique_ptr<ring_buffer, RingDeleter> wakeups_;
  std::thread worker_;
  uint32_t last_table_id_ = 0;
};

uint32_t defaultUnwindRowCapacity(bool whole_machine) {
  return whole_machine ? 4u << 20 : 1u << 20;  // 32 MiB, 8 MiB
}

UnwindTableLoader::UnwindTableLoader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
UnwindTableLoader::~UnwindTableLoader() = default;

Result<std::unique_ptr<UnwindTableLoader>> UnwindTableLoader::start(
    std::span<const bpf_object* const> objects, UnwindLoaderOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  if (Status s = impl->start(objects); !s) return s.error();
  return std::unique_ptr<UnwindTableLoader>(new UnwindTableLoader(std::move(impl)));
}

void UnwindTableLoader::stop() {
  impl_->stop();
}
UnwindSummary UnwindTableLoader::summary() const {
  return impl_->summary();
}
std::vector<std::string> UnwindTableLoader::notes() const {
  return impl_->notes();
}

}  // namespace incise::recorder
