/* Go mutex records: what bpf/go_mutex.bpf.c sends to
 * recorder/sources/go_mutex_source.cc on its own ring buffer.
 *
 * Plain C with fixed-width fields (see bpf/events.h for the conventions).
 *
 *   // recorder: one attach per probe and binary. sync.Mutex probes: the
 *   // cookie is the offset of goid in that binary's runtime.g (GO_NO_GOID:
 *   // not known). Semaphore and notify-list probes: the cookie is the
 *   // index of the binary's struct go_wait_site in `go_sites`, with the
 *   // probed function's go_wait_role above it.
 *   opts.bpf_cookie = goid_offset;
 *   opts.bpf_cookie = GO_WAIT_COOKIE(index, GO_WAIT_READ);
 *   bpf_map_update_elem(go_sites_fd, &index, &site, BPF_ANY);
 *   // ring buffer: EVENT_GO_MUTEX_WAIT carries a struct go_mutex_wait_event,
 *   // EVENT_GO_MUTEX_UNLOCK a struct go_mutex_unlock_event
 */
#ifndef INCISE_BPF_GO_MUTEX_H
#define INCISE_BPF_GO_MUTEX_H

#include "bpf/events.h"

/* Only the Go mutex ring carries it. */
enum go_mutex_event_type {
  EVENT_GO_MUTEX_WAIT = 20,
  EVENT_GO_MUTEX_UNLOCK = 21,
};

/* An attach cookie saying that the binary's goid offset is not known. */
#define GO_NO_GOID 0xffffffffffffffffull

/* Binaries with semaphore or notify-list probes a recording can hold. */
#define MAX_GO_WAIT_SITES 256

/* What a wait on a probed runtime function is. */
enum go_wait_role {
  GO_WAIT_READ = 1,      /* RWMutex.RLock's slow path: a reader on the reader semaphore */
  GO_WAIT_WRITE = 2,     /* RWMutex.Lock's slow path: a writer on the writer semaphore */
  GO_WAIT_BY_CALLER = 3, /* Go before 1.20: one semaphore function for sync.Mutex (a
                          * non-zero skipframes, left to the lockSlow probes), the writer
                          * (called from RWMutex.Lock) and readers (anywhere else) */
  GO_WAIT_COND = 4,      /* sync.Cond.Wait: a waiter on the Cond's notify list */
};

/* The attach cookie of a semaphore or notify-list probe: the binary's
 * index in go_sites, and the probed function's role (0 for a release or
 * signal). */
#define GO_WAIT_COOKIE(index, role) ((__u64)(index) | (__u64)(role) << 32)

/* One probed binary (its index in go_sites). The object reported is the
 * semaphore's or notify list's address minus its offset in the RWMutex or
 * Cond (from the binary's DWARF). */
struct go_wait_site {
  __u64 goid_offset;  /* GO_NO_GOID: not known */
  __u32 read_offset;  /* readerSem in sync.RWMutex */
  __u32 write_offset; /* writerSem in sync.RWMutex */
  __u32 cond_offset;  /* notify in sync.Cond */
  __u32 pad;
  __s64 writer_caller;      /* GO_WAIT_BY_CALLER: RWMutex.Lock's start minus the function's */
  __u64 writer_caller_size; /* and its size; a return address there is the writer's */
};

/* A contended Lock that returned from lockSlow, or a wait on an RWMutex's
 * semaphore or a Cond's notify list that returned. header.time = the RET;
 * stack = the user stack there, the probed function's caller first. */
struct go_mutex_wait_event {
  struct event_header header;
  __u64 request_ns;    /* lockSlow's entry */
  __u64 mutex;         /* the *sync.Mutex, *sync.RWMutex or *sync.Cond */
  __u64 goid;          /* the waiting goroutine; 0 = not known */
  __u64 releaser_goid; /* the goroutine of the last slow unlock since the entry; 0 = none */
  __u32 releaser_tid;  /* its thread (a Cond: the signaller's) */
  __u32 lock_kind;     /* LOCK_KIND_MUTEX, _RWLOCK_READ, _RWLOCK_WRITE, _CONDVAR */
  struct event_stack stack;
};

/* A sync.Mutex unlock that took the slow path (unlockSlow), sent at its
 * RET: header.time = the RET; stack = the user stack there, Unlock's caller
 * first. */
struct go_mutex_unlock_event {
  struct event_header header;
  __u64 release_ns; /* unlockSlow's entry: the mutex is released */
  __u64 mutex;      /* the *sync.Mutex */
  __u64 goid;       /* the releasing goroutine; 0 = not known */
  struct event_stack stack;
};

#endif /* INCISE_BPF_GO_MUTEX_H */
