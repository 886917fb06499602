// Runs one of the A1 reports without the full `incise` binary (which links
// every analyzer library), for throughput measurements while other parts are
// being built.
//
//   incise_report_driver top|flame|sched|offcpu ARGS...
//   example: /usr/bin/time -v incise_report_driver top /tmp/big.trace --limit 5
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

namespace incise::analyzer {
int runTop(const std::vector<std::string>& args);
int runFlame(const std::vector<std::string>& args);
int runSched(const std::vector<std::string>& args);
int runOffcpu(const std::vector<std::string>& args);
}  // namespace incise::analyzer

int main(int argc, char** argv) {
  using namespace incise::analyzer;
  std::string report = argc > 1 ? argv[1] : "";
  std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
  if (report == "top") return runTop(args);
  if (report == "flame") return runFlame(args);
  if (report == "sched") return runSched(args);
  if (report == "offcpu") return runOffcpu(args);
  std::cerr << "usage: incise_report_driver top|flame|sched|offcpu ARGS...\n";
  return 2;
}
