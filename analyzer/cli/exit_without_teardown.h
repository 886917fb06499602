// Ending the `incise` process as soon as a report is written, without
// destroying what the report built.
//
// top and flame end holding tens of thousands of symbolized frames, names
// and stacks; freeing them one by one, just before the process exits and the
// kernel takes the memory back anyway, was ~5% of `incise top` on a
// system-wide trace. main() allows it; a command called directly (the unit
// tests call runTop) never exits, and sanitizer builds keep the normal
// teardown so leak checking still sees everything.
//
//   int main(...) { incise::analyzer::allowExitWithoutTeardown(); ... }
//   int runTop(...) { ...; return exitWithoutTeardown(writeReport(cli, ...)); }
#pragma once

namespace incise::analyzer {

void allowExitWithoutTeardown();

// When allowed: flushes stdout, stderr and C stdio, then ends the process
// with `status`. Otherwise returns `status`.
int exitWithoutTeardown(int status);

}  // namespace incise::analyzer
