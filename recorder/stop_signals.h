// Stop signals: SIGINT, SIGTERM and SIGHUP ask incise-record to stop and
// finish the file; they never kill it.
//
// The handlers are installed first thing, before the slow start-up (loading
// and attaching BPF takes seconds), so a stop at any moment ends in a
// finished file or, before the recording started, in no file at all (an
// existing one is left as it was). SIGHUP is left alone when it is ignored
// (nohup).
//
// Finishing reads the symbol tables of every object the samples hit, which
// takes a while on a big recording. More stop signals within kGracePeriodNs
// of the first are the same request: `timeout` delivers its signal twice
// (to the recorder and to its process group), and so can a terminal. A
// third signal, or another one after the grace period, asks to skip that
// work; the recorder then says what it skipped, in its output and in the
// trace's notes.
//
//   installStopSignals();                       // in main, before anything else
//   while (!stopRequested()) poll();
//   if (!skipRequested()) collectSymbols();     // else: say what was skipped
#pragma once

#include <cstdint>

namespace incise::recorder {

inline constexpr uint64_t kGracePeriodNs = 2'000'000'000;

void installStopSignals();
bool stopRequested();
// The first stop signal's number (SIGINT, ...), 0 before one came.
int stopSignal();
bool skipRequested();

// For tests: what a signal at `now_ns` does to the state (the handler's logic).
void noteStopSignal(int signal, uint64_t now_ns);
void resetStopSignalsForTest();

}  // namespace incise::recorder
