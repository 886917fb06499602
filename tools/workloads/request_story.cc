// request_story: a server-like program that keeps the id of the request each
// thread serves in a thread_local variable (`request_id`, C linkage, so the
// symbol is the plain name), as servers keep a connection or request in
// thread state. Worker threads take requests 1..N from a shared counter; each
// request runs on one thread in four phases whose sizes grow with the id
// modulo 7 (so the slowest requests are known):
//   cpu     burns the thread's CPU                    (serve_cpu)
//   lock    takes the one shared mutex and works     (serve_locked)
//           under it, so other requests wait for it
//   sleep   sleeps, as a request waiting on I/O      (serve_sleep)
//   faults  writes fresh pages                       (serve_faults)
// and request_id is 0 between requests.
//
// Truth, per request (stdout, key=value): request.ID.tid, .start_ns and
// .end_ns (CLOCK_MONOTONIC, the trace's clock), .wall_ns, .on_cpu_ns (the
// thread's CPU clock), .lock_wait_ns (time inside pthread_mutex_lock),
// .sleep_ns (time inside nanosleep), .page_faults (the thread's minor
// faults), and from the kernel's own accounting of the thread's time in a
// runqueue (run_delay, /proc/thread-self/schedstat) .runnable_ns (the whole
// request's), .lock_runnable_ns and .sleep_runnable_ns (inside the lock
// call and the sleep: after the wake-up that ended the wait, or preempted),
// so the time blocked is lock_wait_ns - lock_runnable_ns and sleep_ns -
// sleep_runnable_ns. They are 0 where schedstat cannot be read. Also pid, threads, requests,
// request_id_symbol, and with
// --print-tls, for every worker, tls.I.tid, tls.I.thread_pointer (%fs:0)
// and tls.I.request_id_address, so a test can check where the variable is.
//
// --otel publishes each request in the OpenTelemetry thread context too:
// span id = the request id, trace id = the request id + otel_trace_high
// (its first 8 bytes) then the request id + otel_trace_base (its last 8),
// big-endian as W3C trace context writes them; both keys are printed.
//
// --context-library PATH keeps the id in a library opened with dlopen
// instead (librequest_context.so: `library_request_id`, dynamic TLS), after
// --library-delay-ms; request_id_symbol then names it. The workers start
// --serve-delay-ms later.
//
//   request_story --threads 4 --requests 200 --cpu-us 300 --hold-us 200 --sleep-us 500
//   request_story --context-library ./librequest_context.so --library-delay-ms 4000
//       --serve-delay-ms 1000
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tools/workloads/cpu_work.h"
#include "tools/workloads/options.h"
#include "tools/workloads/report.h"

// The context a recorder reads: the request the thread serves, 0 for none.
// With --otel, also the OpenTelemetry thread context (OTEP 4947): a pointer
// to the thread's record while it serves a request, null between them.
extern "C" {
thread_local std::uint64_t request_id = 0;
thread_local void* otel_thread_ctx_v1 = nullptr;
}

namespace incise::workloads {
namespace {

struct Config {
  std::uint64_t threads = 4;
  std::uint64_t requests = 200;
  std::uint64_t cpu_us = 300;
  std::uint64_t hold_us = 200;
  std::uint64_t sleep_us = 500;
  std::uint64_t pages = 8;
  bool print_tls = false;
  std::string context_library;
  std::uint64_t library_delay_ms = 0;
  std::uint64_t serve_delay_ms = 0;
  bool otel = false;
};

constexpr std::uint64_t kOtelTraceHigh = 0x0af7651916cd43ddu;
constexpr std::uint64_t kOtelTraceBase = 0x8448eb211c800000u;

// OTEP 4947's Thread-Local Context Record, byte-packed, with no attributes.
struct OtelRecord {
  std::uint8_t trace_id[16];
  std::uint8_t span_id[8];
  std::uint8_t valid;
  std::uint8_t trace_flags;
  std::uint16_t attrs_data_size;
};
static_assert(sizeof(OtelRecord) == 28);

void putBigEndian(std::uint8_t* out, std::uint64_t value) {
  for (int i = 7; i >= 0; --i, value >>= 8) out[i] = static_cast<std::uint8_t>(value);
}

// Attaches request `id`'s context to the calling thread, as an SDK does:
// invalid while it is written, then valid, then published.
void attachOtelContext(std::uint64_t id) {
  static thread_local OtelRecord record{};
  record.valid = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  putBigEndian(record.trace_id, kOtelTraceHigh + id);
  putBigEndian(record.trace_id + 8, kOtelTraceBase + id);
  putBigEndian(record.span_id, id);
  record.trace_flags = 1;  // sampled
  record.attrs_data_size = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  record.valid = 1;
  otel_thread_ctx_v1 = &record;
}

// Where the calling thread keeps its request id: request_id, or the
// opened library's variable (set by each worker).
thread_local std::uint64_t* request_slot = &request_id;
using LibraryAddress = std::uint64_t* (*)();

struct Truth {
  std::uint64_t tid = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t on_cpu_ns = 0;
  std::uint64_t lock_wait_ns = 0;
  std::uint64_t sleep_ns = 0;
  std::uint64_t page_faults = 0;
  std::uint64_t runnable_ns = 0;
  std::uint64_t lock_runnable_ns = 0;
  std::uint64_t sleep_runnable_ns = 0;
};

struct TlsFacts {
  std::uint64_t tid = 0;
  std::uintptr_t thread_pointer = 0;
  const void* request_id_address = nullptr;
};

pthread_mutex_t shared_mutex = PTHREAD_MUTEX_INITIALIZER;
constexpr std::size_t kPageSize = 4096;

std::uint64_t threadMinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return static_cast<std::uint64_t>(usage.ru_minflt);
}

// The calling thread's time in a runqueue so far (schedstat's run_delay, ns).
std::uint64_t threadRunDelay() {
  static thread_local int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  char text[128] = {};
  if (fd < 0 || pread(fd, text, sizeof text - 1, 0) <= 0) return 0;
  unsigned long long on_cpu = 0, run_delay = 0;
  if (std::sscanf(text, "%llu %llu", &on_cpu, &run_delay) != 2) return 0;
  return run_delay;
}

std::uintptr_t threadPointer() {
  std::uintptr_t pointer = 0;
  asm volatile("mov %%fs:0, %0" : "=r"(pointer));
  return pointer;
}

}  // namespace

INCISE_WORKLOAD_FUNCTION std::uint64_t serve_cpu(std::uint64_t cpu_ns, std::uint64_t seed) {
  seed = burn_thread_cpu(cpu_ns, seed);
  keep_value(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t serve_locked(std::uint64_t hold_ns, std::uint64_t seed,
                                                    std::uint64_t* lock_wait_ns,
                                                    std::uint64_t* lock_runnable_ns) {
  const std::uint64_t delay_before = threadRunDelay();
  const std::uint64_t before = monotonic_ns();
  pthread_mutex_lock(&shared_mutex);
  *lock_wait_ns += monotonic_ns() - before;
  *lock_runnable_ns += threadRunDelay() - delay_before;
  seed = burn_thread_cpu(hold_ns, seed);
  pthread_mutex_unlock(&shared_mutex);
  keep_value(seed);
  return seed;
}

INCISE_WORKLOAD_FUNCTION void serve_sleep(std::uint64_t duration_ns, std::uint64_t* sleep_ns,
                                          std::uint64_t* sleep_runnable_ns) {
  const std::uint64_t delay_before = threadRunDelay();
  const std::uint64_t before = monotonic_ns();
  incise::workloads::sleep_ns(duration_ns);
  *sleep_ns += monotonic_ns() - before;
  *sleep_runnable_ns += threadRunDelay() - delay_before;
}

INCISE_WORKLOAD_FUNCTION std::uint64_t serve_faults(std::uint64_t pages) {
  if (pages == 0) return 0;
  const std::size_t bytes = pages * kPageSize;
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return 0;
  auto* bytes_out = static_cast<volatile char*>(memory);
  for (std::size_t page = 0; page < pages; ++page) bytes_out[page * kPageSize] = 1;
  munmap(memory, bytes);
  keep_value(pages);
  return pages;
}

namespace {

void serveRequest(const Config& config, std::uint64_t id, Truth& truth) {
  // Sizes grow with id % 7: requests 6, 13, 20, ... are the slowest.
  const std::uint64_t scale = 1 + id % 7;
  truth.tid = current_tid();
  truth.start_ns = monotonic_ns();
  const std::uint64_t cpu_before = thread_cpu_ns();
  const std::uint64_t faults_before = threadMinorFaults();
  const std::uint64_t delay_before = threadRunDelay();
  *request_slot = id;
  if (config.otel) attachOtelContext(id);
  std::uint64_t seed = id * 0x9e3779b97f4a7c15u + 1;
  seed = serve_cpu(config.cpu_us * 1000 * scale, seed);
  seed = serve_locked(config.hold_us * 1000 * scale, seed, &truth.lock_wait_ns,
                      &truth.lock_runnable_ns);
  serve_sleep(config.sleep_us * 1000 * scale, &truth.sleep_ns, &truth.sleep_runnable_ns);
  serve_faults(config.pages * scale);
  *request_slot = 0;
  if (config.otel) otel_thread_ctx_v1 = nullptr;
  truth.runnable_ns = threadRunDelay() - delay_before;
  keep_value(seed);
  truth.page_faults = threadMinorFaults() - faults_before;
  truth.on_cpu_ns = thread_cpu_ns() - cpu_before;
  truth.end_ns = monotonic_ns();
}

}  // namespace
}  // namespace incise::workloads

int main(int argc, char** argv) {
  using namespace incise::workloads;
  Config config;
  Options options("request_story",
                  "Worker threads serve requests, each request's id in a thread_local "
                  "(request_id); prints every request's own timing.",
                  "request_story --threads 4 --requests 200");
  options.add("threads", "worker threads", config.threads);
  options.add("requests", "requests served in all (ids 1..N)", config.requests);
  options.add("cpu-us", "CPU time of a request's cpu phase, times 1 + id % 7", config.cpu_us);
  options.add("hold-us", "CPU time under the shared mutex, times 1 + id % 7", config.hold_us);
  options.add("sleep-us", "sleep of a request, times 1 + id % 7", config.sleep_us);
  options.add("pages", "fresh pages written by a request, times 1 + id % 7", config.pages);
  options.add_flag("print-tls", "print each worker's thread pointer and request_id's address",
                   config.print_tls);
  options.add("context-library",
              "keep the id in this library's library_request_id (opened with dlopen)",
              config.context_library);
  options.add("library-delay-ms", "wait this long before opening --context-library",
              config.library_delay_ms);
  options.add("serve-delay-ms", "then this long before serving the first request",
              config.serve_delay_ms);
  options.add_flag("otel", "publish each request in the OpenTelemetry thread context too",
                   config.otel);
  options.parse_or_exit(argc, argv);
  if (config.threads == 0 || config.threads > 256 || config.requests == 0 ||
      config.requests > 1'000'000) {
    std::fprintf(stderr, "request_story: --threads must be 1..256 and --requests 1..1000000\n");
    return 2;
  }

  LibraryAddress library_address = nullptr;
  if (!config.context_library.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(config.library_delay_ms));
    void* library = dlopen(config.context_library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr)
      library_address =
          reinterpret_cast<LibraryAddress>(dlsym(library, "library_request_id_address"));
    if (library_address == nullptr) {
      std::fprintf(stderr, "request_story: %s: %s\n", config.context_library.c_str(), dlerror());
      return 1;
    }
  }

  std::this_thread::sleep_for(std::chrono::milliseconds(config.serve_delay_ms));

  std::vector<Truth> truths(config.requests + 1);
  std::vector<TlsFacts> tls(config.threads);
  std::atomic<std::uint64_t> next_id{1};
  std::vector<std::thread> workers;
  for (std::uint64_t i = 0; i < config.threads; ++i) {
    workers.emplace_back([&, i] {
      if (library_address != nullptr) request_slot = library_address();
      tls[i] = TlsFacts{current_tid(), threadPointer(), request_slot};
      for (std::uint64_t id = next_id++; id <= config.requests; id = next_id++)
        serveRequest(config, id, truths[id]);
    });
  }
  for (std::thread& worker : workers) worker.join();

  report("pid", static_cast<std::uint64_t>(getpid()));
  report("threads", config.threads);
  report("requests", config.requests);
  report("request_id_symbol", library_address ? "library_request_id" : "request_id");
  if (config.otel) {
    report("otel_trace_high", kOtelTraceHigh);
    report("otel_trace_base", kOtelTraceBase);
  }
  for (std::uint64_t id = 1; id <= config.requests; ++id) {
    const Truth& truth = truths[id];
    const std::string key = "request." + std::to_string(id) + ".";
    report(key + "tid", truth.tid);
    report(key + "start_ns", truth.start_ns);
    report(key + "end_ns", truth.end_ns);
    report(key + "wall_ns", truth.end_ns - truth.start_ns);
    report(key + "on_cpu_ns", truth.on_cpu_ns);
    report(key + "lock_wait_ns", truth.lock_wait_ns);
    report(key + "sleep_ns", truth.sleep_ns);
    report(key + "page_faults", truth.page_faults);
    report(key + "runnable_ns", truth.runnable_ns);
    report(key + "lock_runnable_ns", truth.lock_runnable_ns);
    report(key + "sleep_runnable_ns", truth.sleep_runnable_ns);
  }
  if (config.print_tls) {
    for (std::uint64_t i = 0; i < config.threads; ++i) {
      const std::string key = "tls." + std::to_string(i) + ".";
      report(key + "tid", tls[i].tid);
      report_address(key + "thread_pointer", reinterpret_cast<const void*>(tls[i].thread_pointer));
      report_address(key + "request_id_address", tls[i].request_id_address);
    }
  }
  return 0;
}
