// incise diff BASE NEW: what changed between two traces.
#include <iostream>

#include "analyzer/cli/command_line.h"
#include "analyzer/diff/diff_report.h"

namespace incise::analyzer {

int runDiff(const std::vector<std::string>& args) {
  CommandLine cli(
      {.name = "diff",
       .operands = {"BASE", "NEW"},
       .summary =
           "What changed from BASE to NEW: per function the change in self and total share of\n"
           "each trace's CPU samples (percentage points); per lock acquire site the change in\n"
           "wait and hold p50/p99; per off-CPU stack the change in blocked time per second of\n"
           "trace; per traced function, syscall, device and opcode (incise-record --trace,\n"
           "--syscalls, --block-io, --io-uring) the calls per second and p50/p99/max; per\n"
           "allocation site (incise-record --alloc) the bytes allocated per second and the\n"
           "bytes still live at the end. First it says whether the traces compare fairly\n"
           "(binaries by build-id, durations, sample rates) and what the diff did about it. -o\n"
           "writes a differential flame graph (of CPU samples; --flame alloc or live: of bytes\n"
           "allocated, or still live at the end): widths are the larger share of the two, red\n"
           "grew, blue shrank. --where compares the events of threads holding the values in\n"
           "each trace (both recorded with --context).",
       .examples =
           "  incise diff monday.trace today.trace\n"
           "  incise diff old.trace new.trace -o diff.html --limit 10\n"
           "  incise diff old.trace new.trace -o leaks.html --flame live   # recorded with "
           "--alloc\n"
           "  incise diff old.trace new.trace --comm worker --json > diff.json\n"
           "  incise diff old.trace new.trace --where req!=0   # time inside requests only\n"},
      diffSharedOptions());
  addDiffOwnOptions(cli.extra());
  if (std::optional<int> exit = cli.parse(args)) return *exit;
  auto diff = diffOptionsFrom(cli.values());
  if (!diff) return cli.usageError(diff.error().message());
  diff->base_path = cli.options().files[0];
  diff->new_path = cli.options().files[1];
  return runDiffReport(*diff, std::cout);
}

}  // namespace incise::analyzer
