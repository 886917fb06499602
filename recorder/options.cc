#include "recorder/options.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <boost/program_options.hpp>
#include <fstream>
#include <sstream>

#include "options/bounded_value.h"
#include "options/option_words.h"
#include "preload/alloc_sampler.h"
#include "recorder/context/context_spec.h"
#include "recorder/perf_event_names.h"
#include "recorder/probes/function_probe_spec.h"
#include "recorder/probes/syscall_table.h"

namespace po = boost::program_options;

namespace incise::recorder {

namespace {

using options::boundedValue;

constexpr uint32_t kMaxFrequencyHz = 100000;
// -c: a period of 10^12 events is 1000 s of a clock; far below bit 63, which
// the kernel refuses.
constexpr uint64_t kMaxSamplePeriod = 1'000'000'000'000;
// --counters: bpf/events.h's MAX_COUNTERS, the columns a cpu sample row has.
constexpr size_t kMaxCounters = 4;
// A year: far below where seconds as a nanosecond count would overflow a uint64_t.
constexpr double kMaxDurationSeconds = 365.0 * 86400;
constexpr uint64_t kMaxMinBlockUs = 10'000'000;  // 10 s
// 1 TiB: MB << 20 must not wrap.
constexpr uint64_t kMaxSizeMb = uint64_t{1} << 20;
// PID_MAX_LIMIT on 64-bit kernels.
constexpr uint64_t kMaxPid = 4194304;
// tcmalloc's and heapprofd's default mean.
constexpr uint64_t kDefaultAllocSampleBytes = 512 << 10;

uint32_t maxSampleRate() {
  std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
  uint32_t rate = 0;
  if (in >> rate && rate > 0) return std::min(rate, kMaxFrequencyHz);
  return kMaxFrequencyHz;
}

po::options_description optionDescriptions() {
  static const uint32_t max_rate = maxSampleRate();
  // Where -F's bound comes from, when the kernel's is the lower one.
  static const std::string rate_unit =
      max_rate < kMaxFrequencyHz ? "Hz; kernel.perf_event_max_sample_rate" : "Hz";
  po::options_description options("Options");
  // clang-format off
  options.add_options()
    ("output,o", po::value<std::string>()->default_value("incise.trace"),
     "trace file to write (mode 0600; truncated if it exists)")
    ("freq,F", boundedValue<uint32_t>({.min = 1, .max = max_rate, .unit = rate_unit})->default_value(99),
     "CPU samples per second per CPU. Each sample costs ~25-50 us of CPU with its stack:\n"
     "99 Hz is ~0.5% overhead, 999 Hz a few %")
    ("event,e", po::value<std::string>(),
     ("the sampling event, by perf's name (default: cycles with a hardware PMU, else "
      "cpu-clock). Software: " + perfEventList(false) + ". "
      "Hardware (need a PMU; virtual machines often have none): " + perfEventList(true) +
      ". Samples of a clock weigh alike; of other events, by their period (events)").c_str())
    ("count,c", boundedValue<uint64_t>({.min = 1, .max = kMaxSamplePeriod, .unit = "events"}),
     "a sample every N events (ns for a clock) instead of -F's frequency: -e page-faults "
     "-c 1 samples every fault")
    ("counters", po::value<std::string>(),
     "LIST of up to 4 software counters (page-faults, minor-faults, major-faults, "
     "context-switches, cpu-migrations) read with every sample: each sample carries "
     "the counts since the previous sample of its thread (-p, -- CMD) or cpu (-a, "
     "--cgroup). `incise top --counters` shows them per function")
    ("call-graph,g", po::value<std::string>()->implicit_value("cfi"),
     "user stacks: cfi (the default: unwound in the kernel from each object's .eh_frame,\n"
     "right without frame pointers, frame pointers where an object has no table),\n"
     "fp (frame-pointer walks only: cheapest, cut in code built without them),\n"
     "dwarf[=BYTES] (also copy BYTES of user stack per sample, default 8192, at most\n"
     "65536, unwound offline with the embedded .eh_frame: right in code without\n"
     "frame pointers), hybrid[=BYTES] (frame-pointer stacks plus a small copy,\n"
     "default 512, that repairs the leaf frames)")
    ("pid,p", po::value<std::string>(), "record these processes: PID[,PID...]")
    ("all-cpus,a", "record every process on the machine")
    ("cgroup", po::value<std::string>(),
     "record the processes of a cgroup v2 directory and of the cgroups below it\n"
     "(e.g. /sys/fs/cgroup/system.slice/x.service, or a whole slice)")
    ("duration,d", boundedValue<double>({.min = 1e-3, .max = kMaxDurationSeconds, .unit = "seconds"}),
     "stop after SECONDS (default: Ctrl-C, or when CMD or every -p process exits)")
    ("locks", po::value<std::string>()->default_value("contended"),
     "lock tracing: contended (slow paths and futex waits only: near-free),\n"
     "all (every pthread mutex, rwlock and spin lock call: in process through\n"
     "libincise-preload.so for -- CMD, ~0.1 us a call; uprobes for -p, ~16 us a call),\n"
     "off")
    ("lock-calls", po::value<std::string>()->default_value("preload"),
     "how --locks all records the lock calls of -- CMD: preload (libincise-preload.so in\n"
     "the command and its children) or uprobes (as for -p; no spin locks)")
    ("lock-probe", po::value<std::vector<std::string>>()->composing(),
     "trace a custom lock: BIN:ACQUIRE_SYMBOL:RELEASE_SYMBOL (lock address = first argument);\n"
     "repeatable; costs a uprobe hit per call")
    ("no-sched", "no scheduler switches or wake-ups (process fork/exec/exit are still kept)."
     " Switch tracing costs ~1 us per context switch of a target thread")
    ("sched-stacks", po::value<std::string>()->default_value("blocked"),
     "stacks on scheduler events: blocked (switches where a thread blocks: user, and kernel\n"
     "when the block is uninterruptible; wakers that are targets: user), all (kernel stacks of\n"
     "every block, preempted threads' user stacks, wakers' kernel stacks: costlier on\n"
     "switch-heavy programs), off")
    ("sched-min-block", boundedValue<uint64_t>({.min = 0, .max = kMaxMinBlockUs, .unit = "microseconds"}),
     "count sleeps shorter than MICROSECONDS per thread and off-CPU stack instead of\n"
     "writing their switch and wake-up rows, and condvar and semaphore waits shorter than\n"
     "it instead of their lock rows: far smaller files on switch-heavy servers; sched,\n"
     "offcpu, flame --off-cpu and waits still count them, timelines draw them as running.\n"
     "Default 1000; 0 writes every switch, wake-up and wait")
    ("page-faults", "sample page faults with stacks and fault addresses")
    ("alloc", "sample allocations (malloc, calloc, realloc, aligned, anonymous mmap) and the\n"
     "frees of sampled blocks, with stacks: -- CMD runs with libincise-preload.so, which\n"
     "samples in process (one every --alloc-rate bytes on average, Poisson); -p needs a\n"
     "process that loaded it. `incise alloc` gives bytes per site and what stayed live")
    ("alloc-rate", boundedValue<uint64_t>({.min = preload::kMinSampleBytes,
                                           .max = preload::kMaxSampleBytes, .unit = "bytes"}),
     "with --alloc: the mean bytes between samples (default 524288); smaller samples more\n"
     "often (each sample costs a uprobe hit, ~15 us here)")
    ("context", po::value<std::vector<std::string>>()->composing(),
     "NAME=SYMBOL or NAME=BIN:SYMBOL: a thread_local integer of the program (a request id)\n"
     "read at every sample, switch, wake-up, lock row and fault of its threads; repeatable,\n"
     "up to 4. SYMBOL is in the target's executable unless BIN names a library it loads\n"
     "(at start or with dlopen). `otel` (or otel:BIN): the OpenTelemetry thread context\n"
     "(otel_thread_ctx_v1, OTEP 4947) as two values, trace_id (all 16 bytes) and span_id.\n"
     "`incise requests --by NAME` splits each value's time")
    ("trace", po::value<std::vector<std::string>>()->composing(),
     "time every call of a function: BIN:FUNC, BIN:FUNC+OFFSET (from that offset to the\n"
     "return) or kernel:FUNC; repeatable. Each call costs two uprobe hits (~30 us here)\n"
     "and is a row with the caller's stack; Go functions are timed to their RET instructions")
    ("syscalls", po::value<std::string>(),
     "time syscalls: LIST (read,write,futex) or all; a row per call with the user stack")
    ("block-io", "time block I/O requests: issue to completion, device, bytes, submitter's stack")
    ("io-uring", "time io_uring requests: submission to completion, per opcode, submitter's stack")
    ("aggregate", "with the latency sources: count log2 histograms per (function, stack) in BPF\n"
     "(drained every second) instead of a row per call")
    ("sample", boundedValue<uint32_t>({.min = 1, .max = 1'000'000}),
     "with the latency sources: keep 1 call in N (per CPU); rows stand for N calls each")
    ("max-size", boundedValue<uint64_t>({.min = 1, .max = kMaxSizeMb, .unit = "MB"}),
     "keep the trace within MB megabytes (MiB): recording stops while the\n"
     "symbol tables written at the end still fit")
    ("verbose,v", "print libbpf's debug output and extra notes")
    ("bpf-stats", "on exit, print each BPF program's runs and kernel time per run\n"
     "(enables kernel.bpf_stats for every program while recording)")
    ("help,h", "this text");
  // clang-format on
  return options;
}

Result<std::vector<uint32_t>> parsePidList(const std::string& text) {
  std::vector<uint32_t> pids;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    Result<uint64_t> pid =
        options::parseWholeNumber("-p", item, {.min = 1, .max = kMaxPid, .unit = "a process id"});
    if (!pid) return pid.error();
    struct stat st {};
    if (stat(("/proc/" + item).c_str(), &st) != 0) return Error("no such process: " + item);
    pids.push_back(static_cast<uint32_t>(*pid));
  }
  if (pids.empty()) return Error("-p needs at least one process id");
  return pids;
}

// Any directory's inode would do as an id, and match nothing: only a
// cgroup v2 directory names a cgroup.
Status checkCgroupDirectory(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Error("--cgroup " + path + ": no such cgroup directory");
  struct statfs fs {};
  if (statfs(path.c_str(), &fs) != 0 || fs.f_type != CGROUP2_SUPER_MAGIC) {
    return Error("--cgroup " + path +
                 ": not a cgroup v2 directory (those live where cgroup2 is mounted: "
                 "/sys/fs/cgroup, or /sys/fs/cgroup/unified beside cgroup v1)");
  }
  return Status::ok();
}

Result<LockProbeSpec> parseLockProbe(const std::string& text) {
  size_t last = text.rfind(':');
  size_t middle =
      last == std::string::npos || last == 0 ? std::string::npos : text.rfind(':', last - 1);
  if (middle == std::string::npos || middle == 0 || last == middle + 1 || last + 1 == text.size())
    return Error("--lock-probe " + text + ": expected BIN:ACQUIRE:RELEASE");
  return LockProbeSpec{.binary = text.substr(0, middle),
                       .acquire_symbol = text.substr(middle + 1, last - middle - 1),
                       .release_symbol = text.substr(last + 1)};
}

// -g cfi | fp | dwarf[=BYTES] | hybrid[=BYTES] into config.stack_mode/user_stack_bytes.
Status parseCallGraph(const std::string& text, RecordConfig& config) {
  constexpr uint32_t kDwarfDefault = 8192, kHybridDefault = 512, kMaxCopy = 65536;
  std::string mode = text.substr(0, text.find('='));
  bool has_size = text.find('=') != std::string::npos;
  if ((mode == "cfi" || mode == "fp") && !has_size) {
    config.stack_mode = mode;
    config.user_stack_bytes = 0;
    return Status::ok();
  }
  if (mode != "dwarf" && mode != "hybrid")
    return Error("-g " + text + ": expected cfi, fp, dwarf[=BYTES] or hybrid[=BYTES]");
  uint64_t bytes = mode == "dwarf" ? kDwarfDefault : kHybridDefault;
  if (has_size) {
    Result<uint64_t> size = options::parseWholeNumber(
        "-g " + mode + "=", text.substr(text.find('=') + 1),
        {.min = 64, .max = kMaxCopy, .unit = "bytes of user stack per sample"});
    if (!size) return size.error();
    bytes = *size;
  }
  config.stack_mode = mode;
  config.user_stack_bytes = static_cast<uint32_t>((bytes + 7) & ~uint64_t{7});
  return Status::ok();
}

// -e, -c (exclusive with -F) and --counters.
Status parseSampling(const po::variables_map& vm, RecordConfig& config) {
  if (vm.count("event")) {
    Result<const PerfEventName*> event = findPerfEvent("-e", vm["event"].as<std::string>());
    if (!event) return event.error();
    config.sample_event = (*event)->name;
  }
  if (vm.count("count")) {
    if (!vm["freq"].defaulted())
      return Error(ErrorCode::kInvalidArgument, "-c and -F exclude each other: give one");
    config.sample_period = vm["count"].as<uint64_t>();
  }
  if (vm.count("counters")) {
    Result<std::vector<const PerfEventName*>> counters =
        parseCounterList(vm["counters"].as<std::string>(), kMaxCounters);
    if (!counters) return counters.error();
    for (const PerfEventName* counter : *counters) config.counters.emplace_back(counter->name);
  }
  return Status::ok();
}

}  // namespace

std::string lockModeName(LockMode mode) {
  switch (mode) {
    case LockMode::kOff:
      return "off";
    case LockMode::kContended:
      return "contended";
    case LockMode::kAll:
      return "all";
  }
  return "off";
}

std::string schedStacksName(SchedStacks mode) {
  switch (mode) {
    case SchedStacks::kOff:
      return "off";
    case SchedStacks::kBlocked:
      return "blocked";
    case SchedStacks::kAll:
      return "all";
  }
  return "off";
}

std::string targetDescription(const RecordConfig& config) {
  switch (config.target_kind) {
    case TargetKind::kAll:
      return "all";
    case TargetKind::kCgroup:
      return "cgroup " + config.cgroup_path;
    case TargetKind::kPids: {
      std::string out = "pid";
      for (size_t i = 0; i < config.pids.size(); ++i)
        out += (i ? "," : " ") + std::to_string(config.pids[i]);
      return out;
    }
    case TargetKind::kCommand: {
      std::string out = "command";
      for (const auto& arg : config.command) out += " " + arg;
      return out;
    }
  }
  return "";
}

Result<ParsedCommandLine> parseCommandLine(int argc, const char* const* argv) {
  ParsedCommandLine parsed;
  RecordConfig& config = parsed.config;
  for (int i = 0; i < argc; ++i) config.argv.emplace_back(argv[i]);

  // Everything after "--" is the command to run, untouched by option parsing.
  int option_argc = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      option_argc = i;
      for (int j = i + 1; j < argc; ++j) config.command.emplace_back(argv[j]);
      if (config.command.empty()) return Error("-- must be followed by a command to run");
      break;
    }
  }

  // `-g dwarf` as perf spells it: the mode is the next word, which an
  // implicit-value option would not take. Glue it on as `-gdwarf`.
  std::vector<std::string> glued;
  for (int i = 0; i < option_argc; ++i) {
    std::string_view arg = argv[i];
    if ((arg == "-g" || arg == "--call-graph") && i + 1 < option_argc && argv[i + 1][0] != '-') {
      glued.push_back(std::string(arg) + (arg == "-g" ? "" : "=") + argv[i + 1]);
      ++i;
    } else {
      glued.emplace_back(arg);
    }
  }
  std::vector<const char*> glued_argv;
  for (const auto& arg : glued) glued_argv.push_back(arg.c_str());

  if (Status words = options::checkOptionWords(glued); !words) return words.error();
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(static_cast<int>(glued_argv.size()), glued_argv.data())
                  .options(optionDescriptions())
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Error(e.what());
  }
  if (vm.count("help")) {
    parsed.help = true;
    return parsed;
  }

  config.output = vm["output"].as<std::string>();
  if (config.output.empty()) return Error("-o needs a file name");
  config.frequency_hz = vm["freq"].as<uint32_t>();
  if (Status s = parseSampling(vm, config); !s) return s.error();

  int targets = int{vm.count("pid") > 0} + int{vm.count("all-cpus") > 0} +
                int{vm.count("cgroup") > 0} + int{!config.command.empty()};
  if (targets == 0)
    return Error("nothing to record: give -p PID, -a, --cgroup PATH or -- CMD ARGS");
  if (targets > 1) return Error("choose one target: -p, -a, --cgroup or -- CMD");
  if (vm.count("pid")) {
    Result<std::vector<uint32_t>> pids = parsePidList(vm["pid"].as<std::string>());
    if (!pids) return pids.error();
    config.target_kind = TargetKind::kPids;
    config.pids = pids.take();
  } else if (vm.count("all-cpus")) {
    config.target_kind = TargetKind::kAll;
  } else if (vm.count("cgroup")) {
    config.target_kind = TargetKind::kCgroup;
    config.cgroup_path = vm["cgroup"].as<std::string>();
    if (Status s = checkCgroupDirectory(config.cgroup_path); !s) return s.error();
  } else {
    config.target_kind = TargetKind::kCommand;
  }

  if (vm.count("duration")) config.duration_seconds = vm["duration"].as<double>();
  const std::string locks = vm["locks"].as<std::string>();
  if (locks == "contended") {
    config.lock_mode = LockMode::kContended;
  } else if (locks == "all") {
    config.lock_mode = LockMode::kAll;
  } else if (locks == "off") {
    config.lock_mode = LockMode::kOff;
  } else {
    return Error("--locks " + locks + ": expected contended, all or off");
  }
  const std::string lock_calls = vm["lock-calls"].as<std::string>();
  if (lock_calls == "preload") {
    config.lock_calls = LockCalls::kPreload;
  } else if (lock_calls == "uprobes") {
    config.lock_calls = LockCalls::kUprobes;
  } else {
    return Error("--lock-calls " + lock_calls + ": expected preload or uprobes");
  }
  if (vm.count("lock-probe")) {
    for (const auto& text : vm["lock-probe"].as<std::vector<std::string>>()) {
      Result<LockProbeSpec> probe = parseLockProbe(text);
      if (!probe) return probe.error();
      config.lock_probes.push_back(probe.take());
    }
  }
  if (vm.count("call-graph")) {
    if (Status s = parseCallGraph(vm["call-graph"].as<std::string>(), config); !s) return s.error();
  }
  config.sched = vm.count("no-sched") == 0;
  const std::string sched_stacks = vm["sched-stacks"].as<std::string>();
  if (sched_stacks == "blocked") {
    config.sched_stacks = SchedStacks::kBlocked;
  } else if (sched_stacks == "all") {
    config.sched_stacks = SchedStacks::kAll;
  } else if (sched_stacks == "off") {
    config.sched_stacks = SchedStacks::kOff;
  } else {
    return Error("--sched-stacks " + sched_stacks + ": expected blocked, all or off");
  }
  if (vm.count("sched-min-block"))
    config.sched_min_block_ns = vm["sched-min-block"].as<uint64_t>() * 1000;
  config.page_faults = vm.count("page-faults") > 0;
  if (vm.count("alloc-rate") && !vm.count("alloc")) return Error("--alloc-rate needs --alloc");
  if (vm.count("alloc"))
    config.alloc_sample_bytes =
        vm.count("alloc-rate") ? vm["alloc-rate"].as<uint64_t>() : kDefaultAllocSampleBytes;
  if (vm.count("context")) {
    Result<std::vector<ContextSpec>> contexts =
        parseContextOptions(vm["context"].as<std::vector<std::string>>());
    if (!contexts) return contexts.error();
    config.contexts = contexts.take();
  }
  if (vm.count("trace")) {
    for (const auto& text : vm["trace"].as<std::vector<std::string>>()) {
      Result<FunctionProbeSpec> spec = parseFunctionProbe(text);
      if (!spec) return spec.error();
      config.trace_functions.push_back(text);
    }
  }
  if (vm.count("syscalls")) {
    config.syscalls = vm["syscalls"].as<std::string>();
    Result<std::vector<uint32_t>> numbers = syscallNumbers(config.syscalls);
    if (!numbers) return numbers.error();
  }
  config.block_io = vm.count("block-io") > 0;
  config.io_uring = vm.count("io-uring") > 0;
  bool latency = !config.trace_functions.empty() || !config.syscalls.empty() || config.block_io ||
                 config.io_uring;
  config.latency_aggregate = vm.count("aggregate") > 0;
  if (vm.count("sample")) config.latency_sample = vm["sample"].as<uint32_t>();
  if ((config.latency_aggregate || vm.count("sample")) && !latency)
    return Error("--aggregate and --sample apply to --trace, --syscalls, --block-io, --io-uring");
  if (vm.count("max-size")) config.max_size_bytes = vm["max-size"].as<uint64_t>() << 20;
  config.verbose = vm.count("verbose") > 0;
  config.bpf_stats = vm.count("bpf-stats") > 0;
  return parsed;
}

std::string helpText() {
  std::ostringstream out;
  out << "Usage: incise-record [-o FILE] [-F HZ | -c N] [-e EVENT] [--counters LIST]\n"
         "                     [-g cfi|fp|dwarf[=BYTES]|hybrid[=BYTES]]\n"
         "                     [-p PID[,PID...] | -a | --cgroup PATH | -- CMD ARGS...]\n"
         "                     [-d SECONDS] [--locks contended|all|off]\n"
         "                     [--lock-calls preload|uprobes]\n"
         "                     [--lock-probe BIN:ACQUIRE:RELEASE]... [--no-sched]\n"
         "                     [--sched-stacks blocked|all|off] [--sched-min-block US]\n"
         "                     [--page-faults] [--context NAME=[BIN:]SYMBOL | otel[:BIN]]...\n"
         "                     [--alloc [--alloc-rate BYTES]]\n"
         "                     [--max-size MB] [--bpf-stats] [-v]\n"
         "                     [--trace BIN:FUNC[+OFFSET]]... [--syscalls LIST|all]\n"
         "                     [--block-io] [--io-uring] [--aggregate] [--sample N]\n"
         "\n"
         "Records CPU samples with stacks, scheduler switches and wake-ups, lock waits and\n"
         "(optionally) page faults of the chosen processes into one compressed trace,\n"
         "together with everything needed to analyze it elsewhere (maps, build-ids,\n"
         "symbol tables, kernel symbols, JIT perf maps). Analyze it with `incise`.\n"
         "\n"
         "Needs root, or CAP_BPF + CAP_PERFMON (e.g. `sudo setcap\n"
         "cap_bpf,cap_perfmon,cap_sys_resource+ep $(which incise-record)`).\n"
         "\n"
         "Stops on Ctrl-C / SIGTERM, after -d SECONDS, when CMD exits, or at --max-size;\n"
         "the file is always finished. With -- CMD, a non-zero exit status of CMD becomes\n"
         "incise-record's exit status.\n"
         "\n"
      << optionDescriptions()
      << "\n"
         "Examples:\n"
         "  incise-record -- ./server --port 8080          record a command and its children\n"
         "  incise-record -p 1234 -d 30 -o server.trace     30 s of a running process\n"
         "  incise-record -a -F 999 -d 10                   the whole machine, 999 Hz\n"
         "  incise-record -g fp -a -d 10                    cheapest stacks: frame pointers only\n"
         "  incise-record -e page-faults -c 1 -- ./app      a sample at every page fault\n"
         "  incise-record --counters page-faults,cs -- ./app   faults and switches per function:\n"
         "                                                 incise top --counters\n"
         "  incise-record --cgroup /sys/fs/cgroup/system.slice/nginx.service -d 60\n"
         "  incise-record --locks all -- ./lock_workload    every lock call (in process)\n"
         "  incise-record --locks all --lock-calls uprobes -- ./app   every lock call, by uprobes\n"
         "  incise-record --alloc -- ./server               allocations per site, leaks:\n"
         "                                                 incise alloc; incise flame --live\n"
         "  incise-record --lock-probe ./app:my_lock:my_unlock -- ./app\n"
         "  incise-record --trace ./app:parse_request --syscalls read,write -- ./app\n"
         "                                                 function and syscall latency\n"
         "  incise-record -a -d 30 --block-io --io-uring     I/O latency of the whole machine\n"
         "  incise-record --trace ./app:hot_fn --aggregate -p 1234   histograms only (hot code)\n"
         "  incise-record --context req=request_id -- ./server   each request's time: incise "
         "requests\n"
         "  incise-record --context otel -- ./server   OpenTelemetry spans: incise requests --by "
         "span_id\n";
  return out.str();
}

}  // namespace incise::recorder
