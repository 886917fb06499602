#include "recorder/stop_signals.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace incise::recorder {
namespace {

// Lock-free atomics only: the handler may run at any instruction.
std::atomic<int> g_count{0};
std::atomic<int> g_signal{0};
std::atomic<uint64_t> g_first_ns{0};
std::atomic<bool> g_skip{false};

uint64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

void say(const char* text) {
  (void)!write(STDERR_FILENO, text, std::strlen(text));  // async-signal-safe
}

void onStopSignal(int signal) {
  int saved_errno = errno;
  bool was_skipping = g_skip.load();
  noteStopSignal(signal, monotonicNs());
  if (g_count.load() == 2 && !g_skip.load()) {
    say("\nincise-record: already stopping and finishing the file; a third stop signal, or one "
        "2 s from now, skips reading symbol tables\n");
  } else if (g_skip.load() && !was_skipping) {
    say("\nincise-record: stopping without reading symbol tables, once the work in hand is "
        "done\n");
  }
  errno = saved_errno;
}

static_assert(std::atomic<uint64_t>::is_always_lock_free);

}  // namespace

void noteStopSignal(int signal, uint64_t now_ns) {
  int count = g_count.fetch_add(1) + 1;
  if (count == 1) {
    g_signal.store(signal);
    g_first_ns.store(now_ns);
    return;
  }
  if (count >= 3 || now_ns - g_first_ns.load() >= kGracePeriodNs) g_skip.store(true);
}

void installStopSignals() {
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  struct sigaction hangup {};
  if (sigaction(SIGHUP, nullptr, &hangup) == 0 && hangup.sa_handler != SIG_IGN) {
    sigaction(SIGHUP, &action, nullptr);
  }
}

bool stopRequested() {
  return g_count.load(std::memory_order_relaxed) > 0;
}

int stopSignal() {
  return g_signal.load();
}

bool skipRequested() {
  return g_skip.load();
}

void resetStopSignalsForTest() {
  g_count.store(0);
  g_signal.store(0);
  g_first_ns.store(0);
  g_skip.store(false);
}

}  // namespace incise::recorder
