/* Lock records: what bpf/locks.bpf.c sends to recorder/sources/lock_source.cc.
 *
 * Plain C with fixed-width fields (see bpf/events.h for the conventions).
 * Kind and flag values equal format::LockKind / format::LockFlags;
 * lock_source.cc static_asserts that they agree.
 *
 *   // recorder: attach one uprobe per lock function, the cookie says which
 *   opts.bpf_cookie = LOCK_COOKIE(LOCK_KIND_MUTEX, false);
 *   // ring buffer: EVENT_LOCK carries a struct lock_event,
 *   // EVENT_LOCK_RELEASE a struct lock_release_event
 */
#ifndef INCISE_BPF_LOCKS_H
#define INCISE_BPF_LOCKS_H

#include "bpf/events.h"

#define LOCK_KIND_MUTEX 1
#define LOCK_KIND_RWLOCK_READ 2
#define LOCK_KIND_RWLOCK_WRITE 3
#define LOCK_KIND_SPIN 4
#define LOCK_KIND_CUSTOM 5
#define LOCK_KIND_FUTEX 6   /* a futex wait row (recorder/sources/futex_wait_rows.h) */
#define LOCK_KIND_CONDVAR 7 /* a runtime's condition wait (Go's sync.Cond.Wait) */

#define LOCK_FLAG_CONTENDED (1u << 0)
#define LOCK_FLAG_TRY_FAILED (1u << 1)
#define LOCK_FLAG_CONTENDED_ONLY (1u << 2)
#define LOCK_FLAG_RECURSIVE (1u << 3)

/* A uprobe's attach cookie: low byte = lock kind, LOCK_COOKIE_TRY for a
 * trylock (a non-zero return means "not acquired", not an error). */
#define LOCK_COOKIE_TRY (1u << 8)
#define LOCK_COOKIE(kind, is_try) ((kind) | ((is_try) ? LOCK_COOKIE_TRY : 0))

/* Next to the types events.h reserves for this source (EVENT_LOCK); only
 * the locks ring buffer carries it. */
enum lock_event_type {
  EVENT_LOCK_RELEASE = 19,
};

/* EVENT_LOCK: a lock call returned (mode `all`, --lock-probe). When it
 * acquired the lock (expects_release), an EVENT_LOCK_RELEASE for the same
 * (pid, tid, address) follows at the outermost unlock.
 * header.time = acquired (the return); stack = the user stack. */
struct lock_event {
  struct event_header header;
  __u64 request_ns; /* call / wait start */
  __u64 release_ns; /* 0 unless the record is complete (failed trylock) */
  __u64 address;    /* lock (futex word) address in the process */
  __u32 kind;       /* LOCK_KIND_* */
  __u32 flags;      /* LOCK_FLAG_* */
  __u32 releaser_tid;
  __u32 expects_release;
  __u32 holder_tid;   /* the owner read from the lock when the call blocked; 0 = unknown */
  __u32 holder_state; /* 0: the recorder knows states from the scheduler's records */
  struct event_stack stack;
};

/* header.time = the outermost unlock's call. */
struct lock_release_event {
  struct event_header header;
  __u64 address;
  __u32 flags; /* LOCK_FLAG_RECURSIVE when re-acquired while held */
  __u32 reserved;
};

#endif /* INCISE_BPF_LOCKS_H */
