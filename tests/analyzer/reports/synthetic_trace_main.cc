// Writes a large synthetic CPU-sample trace for measuring report throughput.
//
//   incise_synthetic_trace OUT.trace [SAMPLES] [DISTINCT_STACKS] [DEPTH] [SAMPLES_PER_REQUEST]
//   example: incise_synthetic_trace /tmp/big.trace 5000000 5000 16
//   SAMPLES_PER_REQUEST: a context `req` changing every that many samples of a thread
//   (incise top --where req=...)
#include <cstdlib>
#include <iostream>

#include "tests/analyzer/reports/trace_builder.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: incise_synthetic_trace OUT.trace [SAMPLES] [DISTINCT_STACKS] [DEPTH] "
                 "[SAMPLES_PER_REQUEST]\n"
                 "  example: incise_synthetic_trace /tmp/big.trace 5000000 5000 16 100\n";
    return 2;
  }
  incise::analyzer::testing::SyntheticProfile profile;
  if (argc > 2) profile.samples = std::strtoull(argv[2], nullptr, 10);
  if (argc > 3) profile.distinct_stacks = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
  if (argc > 4) profile.depth = static_cast<uint32_t>(std::strtoul(argv[4], nullptr, 10));
  if (argc > 5) profile.samples_per_request = std::strtoull(argv[5], nullptr, 10);
  if (profile.samples == 0 || profile.distinct_stacks == 0 || profile.depth == 0) {
    std::cerr << "incise_synthetic_trace: SAMPLES, DISTINCT_STACKS and DEPTH must be positive\n";
    return 2;
  }
  incise::Status status = incise::analyzer::testing::writeSyntheticProfile(argv[1], profile);
  if (!status) {
    std::cerr << "incise_synthetic_trace: " << status.message() << "\n";
    return 1;
  }
  std::cout << argv[1] << ": " << profile.samples << " samples, " << profile.distinct_stacks
            << " stacks of " << profile.depth << " frames\n";
  return 0;
}
