#include "recorder/record_session.h"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <optional>
#include <thread>

#include "base/unique_fd.h"
#include "format/writer.h"
#include "preload/alloc_sampler.h"
#include "recorder/bpf_run_stats.h"
#include "recorder/capabilities.h"
#include "recorder/command_launcher.h"
#include "recorder/event_sink.h"
#include "recorder/metadata/own_frames.h"
#include "recorder/metadata/perf_map_watcher.h"
#include "recorder/metadata/process_tracker.h"
#include "recorder/metadata/symbol_collector.h"
#include "recorder/metadata/unwind_table_loader.h"
#include "recorder/output_file.h"
#include "recorder/preload_library.h"
#include "recorder/preload_rings.h"
#include "recorder/probes/lock_probe_spec.h"
#include "recorder/ring_poller.h"
#include "recorder/sources/goroutine_ids.h"
#include "recorder/sources/profile_source.h"
#include "recorder/sources/skeleton_setup.h"
#include "recorder/sources/source.h"
#include "recorder/stop_signals.h"
#include "recorder/target_filter.h"
#include "recorder/uprobe_attacher.h"

namespace incise::recorder {

namespace {

constexpr int kPollTimeoutMs = 100;
constexpr uint64_t kSecondNs = 1'000'000'000;
// The promise is "a kill loses at most the last second". A flush is noticed
// up to one poll timeout late and writes what the ring buffers held a moment
// before, so the cadence keeps that much margin (at exactly 1 s the salvage
// test measured gaps of 1,007 ms under load).
constexpr uint64_t kFlushIntervalNs = kSecondNs - 2 * uint64_t{kPollTimeoutMs} * 1'000'000;
constexpr uint64_t kStatusIntervalNs = 2 * kSecondNs;
// Interned stacks kept for deduplication; past this the table restarts, which
// keeps the recorder's memory bounded however long it runs (~200 bytes a
// stack of 20 frames: 16 Ki stacks hold ~3.5 MB, double while a vector grows).
constexpr uint32_t kMaxInternedStacks = 1u << 14;
// Rows per chunk. A chunk builder reserves this many rows per column up front;
// at the format's default (65536: 512 KiB columns, above M_MMAP_THRESHOLD)
// every chunk sealed by the once-a-second flush cost an mmap per column and
// an munmap once written — ~35 each per second, and each munmap flushed the
// TLB of the CPUs running the recorded threads (an IPI). 16384 rows (128 KiB
// columns) come from the heap and are reused; a second's rows of one kind
// rarely exceed it below -a on a busy box, so chunks compress as before.
constexpr uint32_t kRowsPerChunk = 1u << 14;
// --max-size bounds the whole file, so recording stops while the next flush
// and what the finish adds still fit: the symbols of large objects' hit
// subsets and of the kernel (-a at 999 Hz: 7,890 hit offsets took 55 KB,
// 2,360 kernel addresses 18 KB: 7-8 B each), counted high, plus the last
// chunks, the footer and the notes, whose size varies with what the box runs
// under -a.
constexpr uint64_t kFinishBytesPerLargeObjectHit = 16;
constexpr uint64_t kFinishBytesPerKernelAddress = 12;
constexpr uint64_t kFinishFixedBytes = 32 << 10;
// Flushes whose growth predicts the next one's.
constexpr size_t kGrowthHistory = 4;

// Symbol tables read for newly hit objects are written out once they reach
// this much heap, instead of waiting for the next once-a-second flush: the
// first second of `-a` on a busy box hits dozens of objects.
constexpr size_t kMetadataPressureBytes = 4u << 20;

// How long to wait for the command's exec before recording without knowing.
constexpr int kExecWaitMs = 10'000;

std::string firstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

uint64_t realtimeNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kSecondNs + static_cast<uint64_t>(ts.tv_nsec);
}

format::Header makeHeader(const RecordConfig& config) {
  format::Header header;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  header.host = host;
  utsname uts{};
  if (uname(&uts) == 0) header.kernel_release = uts.release;
  header.boot_id = firstLine("/proc/sys/kernel/random/boot_id");
  header.start_wall_ns = realtimeNowNs();
  header.start_mono_ns = monotonicNowNs();
  header.command_line = config.argv;
  header.recorder_version = "0.1.0";
  header.cpu_count = static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN));
  header.page_size = static_cast<uint32_t>(sysconf(_SC_PAGESIZE));
  format::RecordOptions& options = header.options;
  options.sample_frequency_hz = config.frequency_hz;
  options.stack_mode = config.stacks ? config.stack_mode : "none";
  options.dwarf_stack_bytes = config.user_stack_bytes;
  options.lock_mode = lockModeName(config.lock_mode);
  options.sched_enabled = config.sched;
  options.page_faults_enabled = config.page_faults;
  options.target = targetDescription(config);
  for (const auto& p : config.lock_probes)
    options.lock_probes.push_back(p.binary + ":" + p.acquire_symbol + ":" + p.release_symbol);
  options.sample_event = sampleEventName(config);
  options.sample_period = config.sample_period;
  if (config.sample_period != 0) options.sample_frequency_hz = 0;
  options.counters = config.counters;
  // -p and -a processes sample at the rate they were started with.
  if (config.target_kind == TargetKind::kCommand)
    options.alloc_sample_bytes = config.alloc_sample_bytes;
  options.latency_traces = config.trace_functions;
  options.latency_syscalls = config.syscalls;
  options.latency_block_io = config.block_io;
  options.latency_io_uring = config.io_uring;
  options.latency_aggregate = config.latency_aggregate;
  options.latency_sample = config.latency_sample > 1 ? config.latency_sample : 0;
  for (const ContextSpec& spec : config.contexts)
    options.contexts.push_back({.name = spec.name,
                                .object = spec.binary,
                                .symbol = spec.symbol,
                                .reading = std::string(contextReadingName(spec.reading))});
  return header;
}

// When this process started, on the monotonic clock (from /proc/self/stat's
// start time in clock ticks since boot); now if that cannot be read.
uint64_t processStartNs() {
  std::string stat = firstLine("/proc/self/stat");
  size_t paren = stat.rfind(')');
  unsigned long long ticks = 0;
  if (paren != std::string::npos) {
    // Fields after the comm: state is field 3, starttime field 22.
    const char* at = stat.c_str() + paren + 2;
    for (int field = 3; field < 22 && at; ++field) {
      at = std::strchr(at, ' ');
      if (at) ++at;
    }
    if (at) ticks = std::strtoull(at, nullptr, 10);
  }
  timespec boot{};
  clock_gettime(CLOCK_BOOTTIME, &boot);
  uint64_t boot_now = static_cast<uint64_t>(boot.tv_sec) * kSecondNs + boot.tv_nsec;
  uint64_t started = ticks * (kSecondNs / static_cast<uint64_t>(sysconf(_SC_CLK_TCK)));
  uint64_t now = monotonicNowNs();
  // Boot time includes suspend; monotonic does not: measure back from now.
  return ticks != 0 && started <= boot_now && boot_now - started <= now ? now - (boot_now - started)
                                                                        : now;
}

// The calling thread's CPU time so far (user + system; the kernel verifying
// a program it loads counts here).
double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// The recorder's own CPU time so far, all threads (user + system).
double processCpuSeconds() {
  rusage self{};
  getrusage(RUSAGE_SELF, &self);
  return static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
         static_cast<double>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e6;
}

// How long each step of start-up took, from the exec of incise-record,
// printed under --verbose so that a slow start names its step. Wall time
// and the recorder's CPU time (all threads; the kernel verifying a loaded
// program counts there): on a busy machine a step's wall time is mostly
// waiting for a CPU.
//   incise-record: start-up 231 ms: sources loaded (+188 ms, cpu 301 ms)
class StartupPhases {
 public:
  StartupPhases(uint64_t exec_ns, bool print)
      : last_ns_(exec_ns), exec_ns_(exec_ns), print_(print) {}

  // The step that ended now.
  void mark(const char* step) {
    if (!print_) return;
    uint64_t now = monotonicNowNs();
    double cpu = processCpuSeconds();
    std::fprintf(stderr, "incise-record: start-up %.0f ms: %s (+%.0f ms, cpu %.0f ms)\n",
                 static_cast<double>(now - exec_ns_) / 1e6, step,
                 static_cast<double>(now - last_ns_) / 1e6, (cpu - last_cpu_) * 1e3);
    last_ns_ = now;
    last_cpu_ = cpu;
  }

 private:
  uint64_t last_ns_;
  double last_cpu_ = 0;  // from exec: the first step has the dynamic loader's
  uint64_t exec_ns_;
  bool print_;
};

// CPU per second of recording, from the poll loop's start and from after its
// first seconds: start-up (loading BPF) and first sightings (maps, symbol
// tables of newly hit objects) are in the former only.
struct LoopCpu {
  static constexpr uint64_t kWarmUpNs = 2 * kSecondNs;
  uint64_t start_ns = 0, warm_ns = 0, end_ns = 0;
  double start_cpu = 0, warm_cpu = -1, end_cpu = 0;

  void begin(uint64_t now) {
    start_ns = now;
    start_cpu = processCpuSeconds();
  }
  void tick(uint64_t now) {
    if (warm_cpu < 0 && now - start_ns >= kWarmUpNs) {
      warm_ns = now;
      warm_cpu = processCpuSeconds();
    }
  }
  void end(uint64_t now) {
    end_ns = now;
    end_cpu = processCpuSeconds();
  }
  double seconds() const { return static_cast<double>(end_ns - start_ns) / 1e9; }
  void print() const {
    double total = seconds();
    std::fprintf(stderr, "incise-record: while recording %.1f s: recorder cpu %.1f ms/s", total,
                 total > 0 ? (end_cpu - start_cpu) * 1e3 / total : 0.0);
    double steady = static_cast<double>(end_ns - warm_ns) / 1e9;
    if (warm_cpu >= 0 && steady >= 1.0)
      std::fprintf(stderr, ", after the first %.0f s %.1f ms/s", kWarmUpNs / 1e9,
                   (end_cpu - warm_cpu) * 1e3 / steady);
    std::fputc('\n', stderr);
  }
};

void printStatus(uint64_t events, double seconds, uint64_t bytes, uint64_t lost, bool final_line) {
  std::fprintf(stderr, "\r\x1b[Kincise-record: %.0f events/s, %.1f MB written, %" PRIu64 " lost%s",
               seconds > 0 ? static_cast<double>(events) / seconds : 0.0,
               static_cast<double>(bytes) / 1e6, lost, final_line ? "\n" : "");
}

class Session {
 public:
  explicit Session(const RecordConfig& config) : config_(config) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int run() {
    if (Status s = checkRecordingCapabilities(); !s) return fail(s.message());
    // A --lock-probe that cannot work is the user's mistake to hear about,
    // not a reason to record without lock tracing.
    for (const LockProbeSpec& spec : config_.lock_probes) {
      if (Result<ResolvedLockProbe> probe = resolveLockProbe(spec); !probe) {
        std::cerr << "incise-record: " << probe.error().message() << "\n";
        return 2;
      }
    }
    // Go programs exec'd during -a or --cgroup get their probes after the
    // capabilities are dropped, through a helper forked now: the recorder
    // has one thread and holds nothing yet.
    if (goProgramsMayStart(config_) && config_.lock_mode != LockMode::kOff) {
      if (Result<UprobeAttacher> attacher = UprobeAttacher::start()) {
        attacher_.emplace(attacher.take());
      } else {
        std::cerr << "incise-record: warning: " << attacher.error().message()
                  << " (Go programs started during the recording get no mutex probes)\n";
      }
    }
    // An event this machine cannot count fails before any file is written.
    if (Status s = checkSamplingEvents(config_); !s) return fail(s.message());
    // The output first: a bad -o is named before anything is attached.
    Result<OutputFile> output = OutputFile::create(config_.output);
    if (!output) return fail(output.error().message());
    output_.emplace(output.take());
    Result<TargetFilter> filter = TargetFilter::create(config_);
    if (!filter) return fail(filter.error().message());
    filter_.emplace(filter.take());
    phases_.mark("checks, output file and target filter");

    if (config_.target_kind == TargetKind::kCommand) {
      LaunchEnvironment environment = preloadEnvironment();
      Result<CommandLauncher> child = CommandLauncher::fork(config_.command, environment);
      if (!child) return fail(child.error().message());
      child_.emplace(child.take());
      if (Status s = filter_->addPid(static_cast<uint32_t>(child_->pid())); !s)
        return fail(s.message());
      phases_.mark("command forked");
    }

    if (config_.bpf_stats) {
      if (Status s = bpf_stats_.enable(); !s)
        std::cerr << "incise-record: warning: " << s.message() << "\n";
    }
    // Loading the BPF objects is the slow part of starting; the trace begins
    // after it, when the sources start recording.
    verifierStatistics() = config_.verbose;
    if (int code = openSources(); code != 0) return code;
    phases_.mark("sources loaded");
    format::WriterOptions writer_options;
    writer_options.max_interned_stacks = kMaxInternedStacks;
    writer_options.rows_per_chunk = kRowsPerChunk;
    format::Header header = makeHeader(config_);
    auto writer =
        format::Writer::create(output_->takeWriterFd(), config_.output, header, writer_options);
    if (!writer) return fail("cannot write " + config_.output + ": " + writer.error().message());
    writer_ = writer.take();
    start_ns_ = header.start_mono_ns;
    phases_.mark("trace header written");
    sink_.emplace(*writer_, tracker_);
    if (Status s = tracker_.useVdsoImage(); !s) sink_->addNote(s.message());
    tracker_.symbols().setPressure(kMetadataPressureBytes, [this] {
      // Inside a ring callback a flush would stall every ring behind it: the
      // poll stops after this record instead, and the loop writes them out.
      if (poller_.pause()) {
        metadata_pressure_ = true;
      } else {
        writeQueuedObjects();
      }
    });
    phases_.mark("vDSO image");
    // The in-kernel unwinder's tables are filled before any program is
    // attached, so the first events already find those of -p targets.
    startUnwindTables();
    phases_.mark("unwind tables started");
    if (int code = attachSources(); code != 0) return code;
    phases_.mark("sources attached");
    // The recorder's own kernel frames: the tracing glue's addresses, from
    // all of /proc/kallsyms (tens of ms of the kernel's cpu), and the loaded
    // programs' (bpf_prog_info). Only decoding the first stack needs them,
    // after the recording line, so they are read meanwhile. The thread is
    // created before the main thread drops its capabilities, which capset
    // does for the calling thread only: it keeps those that read program
    // addresses.
    std::vector<const bpf_object*> objects;
    for (const auto& source : sources_) objects.push_back(source->bpfObject());
    std::future<OwnFrames> own_frames = std::async(std::launch::async, [objects] {
      OwnFrames own = OwnFrames::read("/proc/kallsyms");
      for (const bpf_object* object : objects) own.addPrograms(object);
      own.finish();
      return own;
    });
    for (uint32_t pid : config_.pids) tracker_.notePid(pid, monotonicNowNs());
    flushMetadata(monotonicNowNs());
    phases_.mark("processes read from /proc");
    if (stopRequested()) return stoppedBeforeStart();
    if (child_) {
      if (Status s = child_->release(); !s) return fail(s.message());
      if (Status s = child_->waitUntilRunning(kExecWaitMs); !s) return fail(s.message());
      phases_.mark("command released and exec'd");
    }
    // The recording works: from now on the trace is the file -o names.
    if (Status s = output_->publish(); !s) return fail(s.message());
    if (Status s = dropCapabilitiesAfterAttach(); !s)
      std::cerr << "incise-record: warning: " << s.message() << "\n";
    openTargetPidfds();
    phases_.mark("trace published, capabilities dropped");
    printRecording();
    // The rings hold what the sources record meanwhile.
    sink_->setOwnFrames(own_frames.get());
    phases_.mark("own frames read (after the recording line)");
    return loop();
  }

 private:
  // Before the trace was published, an existing file of that name is left
  // as it was and nothing is written.
  int fail(const std::string& message) {
    std::cerr << "incise-record: " << message << "\n";
    if (child_) child_->abandon();
    if (output_ && !output_->published()) {
      output_->discard();
      std::cerr << "incise-record: nothing was written to " << config_.output << "\n";
    }
    return 1;
  }

  int stoppedBeforeStart() {
    std::cerr << "incise-record: stopped by signal " << stopSignal()
              << " before recording started; nothing was written to " << config_.output << "\n";
    if (child_) child_->abandon();
    output_->discard();
    return 128 + stopSignal();
  }

  // libincise-preload.so for the command, when wantsPreload: with its rings
  // for lock calls (--locks all) and its sampling mean (--alloc). A command
  // it cannot enter (static, setuid) or a missing library gets a warning and
  // a note: its lock calls are recorded through uprobes instead, and its
  // allocations not at all (the alloc source notes that nothing was sampled).
  LaunchEnvironment preloadEnvironment() {
    if (!wantsPreload(config_)) return {};
    const bool lock_calls = locksThroughPreload(config_);
    std::string problem;
    Result<std::string> library = findPreloadLibrary();
    if (!library) {
      problem = library.error().message();
    } else if (std::optional<std::string> refusal = preloadRefusal(config_.command[0])) {
      problem = *refusal;
    } else {
      LaunchEnvironment environment{.preload_libraries = {*library}};
      if (config_.alloc_sample_bytes != 0) {
        environment.variables.push_back(std::string(preload::kSampleBytesVariable) + "=" +
                                        std::to_string(config_.alloc_sample_bytes));
      }
      if (!lock_calls) return environment;
      Result<std::shared_ptr<PreloadRings>> rings = PreloadRings::create();
      if (rings) {
        preload_rings_ = rings.take();
        environment.variables.push_back(preload_rings_->variable());
        environment.inherited_fds.push_back(preload_rings_->fd());
        return environment;
      }
      problem = rings.error().message();
    }
    std::string instead = lock_calls ? "its lock calls are recorded through uprobes" : "";
    if (config_.alloc_sample_bytes != 0)
      instead += std::string(instead.empty() ? "" : ", ") + "its allocations are not recorded";
    std::cerr << "incise-record: warning: " << problem << "; " << instead << "\n";
    preload_notes_.push_back("preload: " + problem + "; " + instead);
    return {};
  }

  int openSources() {
    std::vector<std::unique_ptr<Source>> created =
        createSources(config_, attacher_ ? &*attacher_ : nullptr, preload_rings_);
    std::vector<Status> opened(created.size());
    std::vector<double> cpu_ms(created.size()), wall_ms(created.size());
    {
      std::vector<std::thread> loaders;
      for (size_t i = 0; i < created.size(); ++i) {
        loaders.emplace_back([&, i] {
          double before = threadCpuMs();
          uint64_t began = monotonicNowNs();
          opened[i] = created[i]->open(config_, *filter_);
          cpu_ms[i] = threadCpuMs() - before;
          wall_ms[i] = static_cast<double>(monotonicNowNs() - began) / 1e6;
        });
      }
      for (auto& loader : loaders) loader.join();
    }
    for (size_t i = 0; i < created.size(); ++i) {
      if (config_.verbose)  // cpu time: what loading costs whatever the load
        std::fprintf(stderr, "incise-record: %s: loaded in %.0f ms of cpu (%.0f ms wall)\n",
                     std::string(created[i]->name()).c_str(), cpu_ms[i], wall_ms[i]);
    }
    for (size_t i = 0; i < created.size(); ++i) {
      if (!opened[i]) {
        if (auto fatal = fatalWithout(*created[i], opened[i].message())) return fail(*fatal);
        problems_.push_back(opened[i].message());
        std::cerr << "incise-record: " << opened[i].message() << " (recording without "
                  << created[i]->name() << ")\n";
        continue;
      }
      sources_.push_back(std::move(created[i]));
    }
    if (sources_.empty()) return fail("no source could be started; nothing to record");
    return 0;
  }

  // The error that ends the recording when `source` cannot start, or nullopt
  // when the recording goes on without it: a source the command line asked
  // for by name (--trace, --syscalls, ...) is the point of the recording,
  // and --lock-probe needs the lock source.
  std::optional<std::string> fatalWithout(const Source& source, const std::string& message) const {
    if (source.name() == "locks" && !config_.lock_probes.empty())
      return message + " (--lock-probe needs the lock source)";
    if (source.required()) return message;
    return std::nullopt;
  }

  int attachSources() {
    std::vector<std::unique_ptr<Source>> attached;
    for (auto& source : sources_) {
      uint64_t began = monotonicNowNs();
      if (Status s = source->attach(poller_, *sink_); !s) {
        if (auto fatal = fatalWithout(*source, s.message())) return fail(*fatal);
        problems_.push_back(s.message());
        std::cerr << "incise-record: " << s.message() << " (recording without " << source->name()
                  << ")\n";
        continue;
      }
      if (config_.verbose)
        std::fprintf(stderr, "incise-record: %s: attached in %.1f ms\n",
                     std::string(source->name()).c_str(),
                     static_cast<double>(monotonicNowNs() - began) / 1e6);
      attached.push_back(std::move(source));
    }
    sources_ = std::move(attached);
    for (const auto& problem : problems_) sink_->addNote("source unavailable: " + problem);
    for (const auto& note : preload_notes_) sink_->addNote(note);
    // The trace is not in place yet: fail() discards it and leaves -o as it was.
    if (sources_.empty()) return fail("no source could be started; nothing to record");
    return 0;
  }

  // -g cfi: the in-kernel unwinder's tables, created before the recorder
  // drops its capabilities (recorder/metadata/unwind_table_loader.h); those of -p
  // targets are built before any program is attached.
  void startUnwindTables() {
    if (!config_.stacks || config_.stack_mode != "cfi") return;
    std::vector<const bpf_object*> objects;
    for (const auto& source : sources_) objects.push_back(source->bpfObject());
    bool whole_machine =
        config_.target_kind == TargetKind::kAll || config_.target_kind == TargetKind::kCgroup;
    auto loader = UnwindTableLoader::start(
        objects, UnwindLoaderOptions{.row_capacity = defaultUnwindRowCapacity(whole_machine),
                                     .initial_pids = config_.pids,
                                     .verbose = config_.verbose,
                                     .build_on_first_walk = whole_machine});
    if (!loader) {
      std::cerr << "incise-record: warning: " << loader.error().message()
                << " (user stacks are frame-pointer walks)\n";
      sink_->addNote("user stacks: frame-pointer walks: " + loader.error().message());
      return;
    }
    unwind_tables_ = loader.take();
  }

  void stopUnwindTables() {
    if (!unwind_tables_) return;
    unwind_tables_->stop();
    for (const std::string& note : unwind_tables_->notes()) {
      sink_->addNote(note);
      if (config_.verbose) std::cerr << "incise-record: " << note << "\n";
    }
    unwind_tables_.reset();
  }

  // One line once every source records, so a user (or a script) knows when
  // what they do is in the trace.
  void printRecording() const {
    std::string what;
    for (const auto& source : sources_)
      what += (what.empty() ? "" : ", ") + std::string(source->name());
    double startup = static_cast<double>(monotonicNowNs() - process_start_ns_) / 1e9;
    std::fprintf(stderr, "incise-record: recording %s (%s) to %s; started in %.2f s\n",
                 targetDescription(config_).c_str(), what.c_str(), config_.output.c_str(), startup);
  }

  // The symbol tables queued so far, written out now to bound their memory.
  void writeQueuedObjects() {
    metadata_pressure_ = false;
    writer_->addMetadata(tracker_.takeDelta(monotonicNowNs()));
    if (Status flushed = writer_->flush(); flushed) releaseFreedMemory();
  }

  void flushMetadata(uint64_t now) {
    format::MetadataDelta delta = tracker_.takeDelta(now);
    tracker_.forgetExited(now);
    perf_maps_.poll(tracker_.knownPids(), now, delta.perf_maps);
    if (!delta.objects.empty()) release_pending_ = true;
    if (!delta.empty()) writer_->addMetadata(std::move(delta));
  }

  // Symbol tables and their encodings are many small strings: once written,
  // their pages go back to the system instead of staying in the heap.
  void releaseFreedMemory() {
    malloc_trim(0);
    release_pending_ = false;
  }

  // Up to kPollTimeoutMs, but no later than the end of -d.
  int pollTimeoutMs(uint64_t now, uint64_t start) const {
    if (config_.duration_seconds <= 0) return kPollTimeoutMs;
    uint64_t end = start + static_cast<uint64_t>(config_.duration_seconds * 1e9);
    if (now >= end) return 0;
    return static_cast<int>(std::min<uint64_t>(kPollTimeoutMs, (end - now + 999'999) / 1'000'000));
  }

  // Why the loop stops; empty while it runs.
  std::string stopReason(uint64_t now, uint64_t start) {
    if (stopRequested()) return "stopped by signal";
    if (config_.duration_seconds > 0 &&
        now - start >= static_cast<uint64_t>(config_.duration_seconds * 1e9))
      return "duration reached";
    if (child_ && child_->pollExit()) return "command exited";
    if (watching_pids_ && allTargetsExited()) return "every target process exited";
    return "";
  }

  // -p targets are watched through pidfds: a pid reused by another process
  // after the target exits does not keep the recording alive.
  void openTargetPidfds() {
    if (config_.target_kind != TargetKind::kPids) return;
    watching_pids_ = true;
    for (uint32_t pid : config_.pids) {
      UniqueFd fd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
      if (fd) {
        target_pidfds_.push_back(std::move(fd));
      } else if (errno != ESRCH) {
        watching_pids_ = false;  // cannot tell when it exits: record until stopped
      }
      // ESRCH: it exited (and was reaped) while the sources were loading,
      // which takes seconds on a loaded box; it counts as exited.
    }
  }

  bool allTargetsExited() const {
    for (const UniqueFd& fd : target_pidfds_) {
      pollfd p{fd.get(), POLLIN, 0};
      if (::poll(&p, 1, 0) == 0) return false;  // readable once the process has exited
    }
    return true;
  }

  // Whether another flush, then the finish, could take the file past --max-size.
  bool wouldPassMaxSize(uint64_t bytes) {
    growths_.push_back(bytes > last_bytes_ ? bytes - last_bytes_ : 0);
    last_bytes_ = bytes;
    if (growths_.size() > kGrowthHistory) growths_.erase(growths_.begin());
    uint64_t next_flush = *std::max_element(growths_.begin(), growths_.end());
    uint64_t finish = kFinishFixedBytes +
                      kFinishBytesPerLargeObjectHit * tracker_.symbols().largeObjectHitOffsets() +
                      kFinishBytesPerKernelAddress * tracker_.symbols().hitKernelAddresses().size();
    return bytes + next_flush + finish >= config_.max_size_bytes;
  }

  int loop() {
    bool tty = isatty(STDERR_FILENO);
    // -d counts from the trace's start: when the sources began recording.
    uint64_t start = start_ns_;
    loop_cpu_.begin(monotonicNowNs());
    uint64_t last_flush = start, last_status = start, status_events = 0;
    last_bytes_ = writer_->stats().bytes_written;  // start-up's metadata is no flush's growth
    int exit_code = 0;
    std::string reason;
    while (reason.empty()) {
      Result<int> polled = poller_.poll(pollTimeoutMs(monotonicNowNs(), start));
      if (!polled) {
        std::cerr << "incise-record: " << polled.error().message() << "\n";
        exit_code = 1;
        break;
      }
      if (metadata_pressure_) writeQueuedObjects();
      uint64_t now = monotonicNowNs();
      loop_cpu_.tick(now);
      if (now - last_flush >= kFlushIntervalNs) {
        for (auto& source : sources_) source->pollLost(*sink_);
        flushMetadata(now);
        Status flushed = writer_->flush();
        if (release_pending_) releaseFreedMemory();
        last_flush = now;
        if (!flushed) {
          std::cerr << "incise-record: stopping: " << flushed.message() << "\n";
          exit_code = 1;
          break;
        }
        uint64_t bytes = writer_->stats().bytes_written;
        if (config_.max_size_bytes && wouldPassMaxSize(bytes)) {
          std::cerr << "incise-record: stopping: the trace reached --max-size ("
                    << (config_.max_size_bytes >> 20)
                    << " MB, room kept for the symbol tables written at the end)\n";
          break;
        }
      }
      if (tty && now - last_status >= kStatusIntervalNs) {
        uint64_t events = poller_.eventsConsumed();
        printStatus(events - status_events, static_cast<double>(now - last_status) / 1e9,
                    writer_->stats().bytes_written, sink_->lostTotal(), false);
        status_events = events;
        last_status = now;
      }
      reason = stopReason(now, start);
    }
    if (tty) std::fputs("\r\x1b[K", stderr);
    return finish(exit_code);
  }

  int finish(int exit_code) {
    loop_cpu_.end(monotonicNowNs());
    stopUnwindTables();
    if (bpf_stats_.enabled())
      for (const auto& source : sources_) bpf_stats_.add(source->bpfObject());
    (void)poller_.drain();
    while (metadata_pressure_) {  // a drain paused: the rest is still in the rings
      writeQueuedObjects();
      (void)poller_.drain();
    }
    for (auto& source : sources_) {
      source->finish(*sink_);
      source->pollLost(*sink_);
    }
    uint64_t events = poller_.eventsConsumed();
    // The trace ends here: every event in it is older; symbols come after.
    uint64_t end_ns = monotonicNowNs();
    sources_.clear();  // detach before the slow part
    // The finish's CPU: in all (the writer thread compresses meanwhile) and
    // this thread's by step.
    const double finish_cpu = processCpuSeconds();
    const double finish_thread_ms = threadCpuMs();
    if (!skipRequested()) tracker_.symbols().readLargeObjects();
    const double large_objects_ms = threadCpuMs();
    uint64_t now = monotonicNowNs();
    flushMetadata(now);
    const double kernel_symbols_ms = threadCpuMs();
    if (!skipRequested()) {
      std::vector<std::string> problems;
      format::MetadataDelta symbols = collectSymbols(tracker_, now, "/proc/kallsyms", &problems);
      for (const auto& problem : problems) {
        symbols.notes.push_back(problem);
        if (config_.verbose) std::cerr << "incise-record: " << problem << "\n";
      }
      writer_->addMetadata(std::move(symbols));
    } else {
      const char* skipped =
          "a further stop signal skipped reading symbol tables (of the objects samples hit and of "
          "the kernel): their frames show as addresses";
      std::cerr << "incise-record: " << skipped << "\n";
      sink_->addNote(skipped);
    }
    const double close_ms = threadCpuMs();
    Status closed = writer_->close(end_ns);
    if (config_.verbose) {
      std::fprintf(stderr,
                   "incise-record: finish: cpu %.0f ms; main thread: large objects' symbols %.0f "
                   "ms, kernel symbols %.0f ms, closing the file %.0f ms\n",
                   (processCpuSeconds() - finish_cpu) * 1e3, large_objects_ms - finish_thread_ms,
                   close_ms - kernel_symbols_ms, threadCpuMs() - close_ms);
    }
    if (!closed) {
      std::cerr << "incise-record: could not finish " << config_.output << ": " << closed.message()
                << "\n";
      exit_code = 1;
    }
    format::WriterStats stats = writer_->stats();
    // The recorder's own cost (all its threads, not the recorded command).
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    double cpu_seconds = processCpuSeconds();
    std::fprintf(stderr,
                 "incise-record: %" PRIu64 " events, %.2f MB in %s, %" PRIu64
                 " lost; recorder cpu %.2f s, peak rss %.1f MiB\n",
                 events, static_cast<double>(stats.bytes_written) / 1e6, config_.output.c_str(),
                 sink_->lostTotal(), cpu_seconds, static_cast<double>(self.ru_maxrss) / 1024.0);
    loop_cpu_.print();
    bpf_stats_.print(stderr, loop_cpu_.seconds());
    if (child_) {
      std::optional<int> status = child_->pollExit();
      if (!child_->execError().empty()) {
        std::cerr << "incise-record: " << child_->execError() << "\n";
        return 1;
      }
      if (exit_code == 0 && status && *status != 0) return *status;
    }
    return exit_code;
  }

  const RecordConfig& config_;
  std::optional<OutputFile> output_;  // holds the output's lock until the end
  std::optional<TargetFilter> filter_;
  std::optional<CommandLauncher> child_;
  std::shared_ptr<PreloadRings> preload_rings_;  // null: the command runs without the library
  std::vector<std::string> preload_notes_;
  std::optional<UprobeAttacher> attacher_;  // outlives the sources that use it
  std::unique_ptr<format::Writer> writer_;
  ProcessTracker tracker_;
  PerfMapWatcher perf_maps_;
  std::optional<EventSink> sink_;
  RingPoller poller_;
  std::vector<std::unique_ptr<Source>> sources_;
  std::unique_ptr<UnwindTableLoader> unwind_tables_;  // after sources_: destroyed first
  std::vector<std::string> problems_;                 // sources left out, and why
  uint64_t process_start_ns_ = processStartNs();
  StartupPhases phases_{process_start_ns_, config_.verbose};
  uint64_t start_ns_ = 0;  // the trace's start (the header's)
  std::vector<UniqueFd> target_pidfds_;
  bool metadata_pressure_ = false;  // a poll paused: the queued symbol tables are to be written
  bool watching_pids_ = false;      // -p: stop once every pidfd is readable (or none could open)
  bool release_pending_ = false;
  LoopCpu loop_cpu_;
  BpfRunStats bpf_stats_;
  uint64_t last_bytes_ = 0;        // file size after the last flush
  std::vector<uint64_t> growths_;  // of the last kGrowthHistory flushes
};

}  // namespace

int runRecording(const RecordConfig& config) {
  // First: a stop during the seconds of start-up must not kill the recorder.
  installStopSignals();
  // A fixed threshold keeps buffers of 256 KiB and more (chunk columns,
  // encoded blocks, symbol vectors) in their own mappings, returned to the
  // system when freed; glibc's default raises it after the first big free,
  // after which such buffers stay in the heap and RSS ratchets up.
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  mallopt(M_TRIM_THRESHOLD, 1 << 20);
  return Session(config).run();
}

}  // namespace incise::recorder
