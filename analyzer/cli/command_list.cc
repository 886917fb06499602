// The one list of `incise` subcommands, in the order `incise --help` shows them.
#include "analyzer/cli/command.h"

namespace incise::analyzer {

int runRecord(const std::vector<std::string>& args);
int runInfo(const std::vector<std::string>& args);
int runDump(const std::vector<std::string>& args);
int runCheck(const std::vector<std::string>& args);
int runTop(const std::vector<std::string>& args);
int runFlame(const std::vector<std::string>& args);
int runOffcpu(const std::vector<std::string>& args);
int runAlloc(const std::vector<std::string>& args);
int runSched(const std::vector<std::string>& args);
int runLocks(const std::vector<std::string>& args);
int runWaits(const std::vector<std::string>& args);
int runCorrelate(const std::vector<std::string>& args);
int runLatency(const std::vector<std::string>& args);
int runRequests(const std::vector<std::string>& args);
int runDiff(const std::vector<std::string>& args);
int runExport(const std::vector<std::string>& args);
int runArchive(const std::vector<std::string>& args);

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"record", "record a trace (runs incise-record; see incise record --help)", runRecord},
      {"info", "what a trace holds: header, duration, rows, lost events, bytes per column",
       runInfo},
      {"dump", "print rows of a kind (or stacks, metadata) as a table or JSON lines", runDump},
      {"check", "verify every block; say what is recoverable and where damage starts", runCheck},
      {"top", "flat profile: self and total % per function, module or line", runTop},
      {"flame", "flame graph (HTML, SVG) or folded stacks: on-CPU, --off-cpu, --locks, --alloc",
       runFlame},
      {"offcpu", "off-CPU time per stack and reason; runqueue latency per thread", runOffcpu},
      {"alloc", "sampled allocations (--alloc) per stack and site: bytes, counts, live (leaks)",
       runAlloc},
      {"sched", "per thread: running, runnable, blocked; switches; migrations", runSched},
      {"locks", "per lock or acquire site: contention, wait and hold times, top threads", runLocks},
      {"waits", "every wait by kind (lock, condvar, semaphore, join, park): who held or posted",
       runWaits},
      {"correlate", "the story: lock holders preempted or faulting, and who waited", runCorrelate},
      {"latency", "per function, syscall, device: calls, p50/p90/p99/max, histogram; heat maps",
       runLatency},
      {"requests", "per context value (--context: a request id): wall, on-CPU, waits, faults",
       runRequests},
      {"diff", "what changed between two traces; differential flame graph", runDiff},
      {"export", "a trace as pprof, Chrome trace (Perfetto), speedscope, folded", runExport},
      {"archive",
       "keep traces: a directory (add, ls, diff) or ClickHouse for a fleet (init, push, diff, top)",
       runArchive},
  };
  return list;
}

}  // namespace incise::analyzer
