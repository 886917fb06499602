// The calling thread's ring in the recorder's area (preload/ring_area.h):
// claimed at the thread's first recorded call, handed back at its exit (a
// thread-specific key's destructor marks it exited; the recorder drains and
// frees it). Pushing never blocks and never allocates: a full ring counts
// the record lost, and so does a record made by a signal handler while its
// thread was writing one (the ring has one producer). After fork the child's
// thread claims a ring of its own; the parent's stays the parent's.
//
//   if (ThreadRing* ring = currentRing()) push(ring, record);
//   else noteUnrecorded();
#pragma once

#include "preload/ring_layout.h"

namespace incise::preload {

// Null before the library's constructor ran, when nothing records, or when
// every ring is taken.
ThreadRing* currentRing();
void push(ThreadRing* ring, const Record& record);
// A call made without a ring while the area exists: counted as lost (not
// after the thread's exit hook ran: the calls of later thread-exit
// destructors are not recorded).
void noteUnrecorded();

// CLOCK_MONOTONIC in ns (vDSO: no system call).
uint64_t monotonicNs();

// From the constructor: the thread-exit key and the fork handler.
void installThreadHooks();

}  // namespace incise::preload
