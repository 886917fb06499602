/* Futex waits seen at the blocking context switch: what bpf/sched.bpf.c
 * sends to recorder/sources/sched_source.cc (bpf/futex_wait.bpf.h reads them).
 *
 * Plain C with fixed-width fields (see bpf/events.h). The wait_object and
 * holder state values equal format::WaitObject and format::HolderState;
 * sched_source.cc static_asserts that they agree.
 *
 *   // ring buffer: EVENT_FUTEX_SWITCH carries a struct futex_switch_event, a
 *   // sched_switch_event whose prev blocks in a futex wait, with its facts
 */
#ifndef INCISE_BPF_FUTEX_WAIT_H
#define INCISE_BPF_FUTEX_WAIT_H

#include "bpf/events.h"

/* Next to the types events.h and locks.h use. */
enum futex_event_type {
  EVENT_FUTEX_SWITCH = 20,
};

enum wait_object {
  WAIT_OBJECT_UNKNOWN = 0,
  WAIT_OBJECT_MUTEX = 1,
  WAIT_OBJECT_RWLOCK_READERS = 2,
  WAIT_OBJECT_RWLOCK_WRITE_PHASE = 3,
  WAIT_OBJECT_RWLOCK_WRITERS = 4,
  WAIT_OBJECT_CONDVAR_GROUP0 = 5,
  WAIT_OBJECT_CONDVAR_GROUP1 = 6,
  WAIT_OBJECT_SEMAPHORE = 7,
  WAIT_OBJECT_THREAD = 8,
  WAIT_OBJECT_PI_MUTEX = 9,
  WAIT_OBJECT_INTERNAL_LOCK = 10,
};

enum holder_state {
  HOLDER_UNKNOWN = 0,
  HOLDER_RUNNING = 1,
  HOLDER_RUNNABLE = 2,
  HOLDER_SLEEPING = 3,
  HOLDER_DISK_SLEEP = 4,
  HOLDER_OTHER = 5,
};

/* Thread ids per element of bpf/thread_states.bpf.h's array (a power of
 * two); the recorder sizes the array to pid_max with it. */
#define THREAD_STATE_PAGE 4096

struct futex_wait_facts {
  __u64 uaddr;
  __u32 op;    /* the futex op argument, flag bits included */
  __u32 value; /* the value waited for */
  __u32 object;
  __u32 holder_tid;   /* the owner the lock records; 0 = none. Not checked here */
  __u32 holder_state; /* the holder's state when the wait began (bpf/thread_states.bpf.h) */
  __u32 flags;        /* 0 */
};

/* header.pid/tid = the thread blocking in the wait. */
struct futex_switch_event {
  struct event_header header;
  __u32 prev_state;
  __u32 target_flags;
  __u32 next_pid;
  __u32 next_tid;
  __u64 prev_goid;
  __u64 next_goid;
  struct futex_wait_facts futex;
  struct event_stack stack;
};

/* wakeup_event.waker_flags */
#define WAKER_IN_FUTEX_WAKE (1u << 0) /* the waker is in futex(2) with a wake op */
#define WAKER_EXITING (1u << 1)       /* the waker is exiting (a join's wake) */

#endif /* INCISE_BPF_FUTEX_WAIT_H */
