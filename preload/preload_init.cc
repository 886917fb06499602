// libincise-preload.so's constructor: resolves the C library's lock
// functions, attaches the recorder's ring area and installs the thread-exit
// and fork hooks, in that order, before the program's main. Priority 101
// runs it before the constructors of the program's own libraries where the
// loader allows (LD_PRELOAD libraries are initialised last among the
// dependencies, so those of libraries they depend on come first).
#include "preload/ring_area.h"
#include "preload/thread_ring.h"

namespace incise::preload {

void resolveLockFunctions();  // preload/lock_interpose.cc

namespace {

__attribute__((constructor(101))) void startPreload() {
  resolveLockFunctions();
  installThreadHooks();
  attachRingArea();
}

}  // namespace
}  // namespace incise::preload
