/* A futex wait, seen at the context switch where its thread blocks.
 *
 * A thread blocked in futex(2) is still inside the syscall when sched_switch
 * runs for it (`current` is still that thread), and its saved user registers
 * hold the syscall number and arguments: uaddr, op and the value waited for.
 * So the blocking switch sees every contended wait without a probe on any
 * syscall: futex calls that do not block (uncontended wakes, EAGAIN) cost
 * nothing, and no other syscall of any task is put on the tracing slow path,
 * as the syscall tracepoints did for every syscall of every task.
 *
 * While the thread is blocked its memory can be read as the current task's
 * (bpf_probe_read_user): the words around uaddr are matched against glibc's
 * x86-64 layouts to say what the word belongs to (format::WaitObject, whose
 * values `enum wait_object` repeats), and where the object keeps its owner
 * the owner's tid is read with the same read:
 *   pthread_mutex_t   (40 bytes)  __lock 0, __count 4, __owner 8, __nusers 12,
 *                                 __kind 16; waiters sleep with FUTEX_WAIT on
 *                                 __lock while it is 2 (nptl/lowlevellock.c);
 *                                 a robust mutex's __lock is tid | FUTEX_WAITERS
 *   pthread_rwlock_t  (56 bytes)  __readers 0, __writers 4, __wrphase_futex 8,
 *                                 __writers_futex 12, __pad3/__pad4 16/20 (0),
 *                                 __cur_writer 24, __shared 28 (0/1), __pad1/2
 *                                 32-47 (0), __flags 48 (0-2); waits use
 *                                 FUTEX_WAIT_BITSET
 *   pthread_cond_t    (48 bytes)  __wseq 0, __g_refs[2] 16, __wrefs 36 (waiters
 *                                 << 3), __g_signals[2] 40; waiters sleep on
 *                                 __g_signals[g] with value 0
 *   sem_t             (new_sem)   value 0, nwaiters 4, private 8 (FUTEX_PRIVATE
 *                                 0 or FUTEX_SHARED 128, the op's flag inverted);
 *                                 waiters sleep on the value with value 0
 *   pthread_join      the thread's tid word, shared (no FUTEX_PRIVATE_FLAG),
 *                     value = the tid of a thread of the same process
 *   PI mutex          FUTEX_LOCK_PI: the word is the owner's tid
 * The owner's state is its last switch's or wake-up's (bpf/thread_states.bpf.h).
 * Whether the owner is a live thread of the waiter's process is checked by
 * the recorder (recorder/sources/futex_wait_rows.h), not here: bpf_task_from_pid and
 * its release cost about 1 us per wait (1.4-1.7 us for this whole function
 * against 0.44-0.49 us without it, timed in the program on a futex storm),
 * inside a switch that runs with interrupts off.
 *
 *   struct futex_wait_facts facts;
 *   if (read_futex_wait(&facts)) { ... facts.holder_tid ... }   // at prev's switch
 */
#ifndef INCISE_BPF_FUTEX_WAIT_BPF_H
#define INCISE_BPF_FUTEX_WAIT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/events.h"
#include "bpf/futex_wait.h"
#include "bpf/thread_states.bpf.h"

#define NR_FUTEX 202 /* x86-64 */
#define FUTEX_WAIT 0
#define FUTEX_LOCK_PI 6
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2 13
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_COMMAND_MASK 0x7f
#define FUTEX_WAITERS 0x80000000u
#define FUTEX_TID_MASK 0x3fffffffu

/* glibc's pthread_mutex_t __kind: the type (0-3) and flag bits
 * (robust 16, PI 32, PP 64, process-shared 128, elision 256/512). */
#define MUTEX_KIND_BITS 0x3f3u
#define RWLOCK_FUTEX_USED 2 /* PTHREAD_RWLOCK_FUTEX_USED */
#define MAX_PLAUSIBLE_WAITERS (1u << 20)

static __always_inline bool is_futex_wait_command(__u32 command) {
  return command == FUTEX_WAIT || command == FUTEX_WAIT_BITSET || command == FUTEX_LOCK_PI ||
         command == FUTEX_LOCK_PI2 || command == FUTEX_WAIT_REQUEUE_PI;
}

static __always_inline bool mutex_layout(const __u32* m) {
  /* __kind, and __nusers not absurd (it counts holders, so at most a few). */
  return (m[4] & ~MUTEX_KIND_BITS) == 0 && m[3] < MAX_PLAUSIBLE_WAITERS;
}

/* 14 words of a candidate pthread_rwlock_t. */
static __always_inline bool rwlock_layout(const __u32* w) {
  return w[4] == 0 && w[5] == 0 && w[7] <= 1 && (w[8] & ~0xffu) == 0 && w[9] == 0 && w[10] == 0 &&
         w[11] == 0 && w[12] <= 2 && w[13] == 0;
}

/* 12 words of a candidate pthread_cond_t whose group `g` has a waiter. */
static __always_inline bool condvar_layout(const __u32* w, int g) {
  __u32 wrefs = w[9];
  __u32 refs = w[4 + g];
  return (w[0] | w[1]) != 0 && wrefs >= 8 && (wrefs >> 3) < MAX_PLAUSIBLE_WAITERS && refs >= 2 &&
         (refs >> 1) < MAX_PLAUSIBLE_WAITERS;
}

/* 4 words of a candidate sem_t: value, nwaiters, private, pad. */
static __always_inline bool semaphore_layout(const __u32* w, __u32 op) {
  __u32 expected_private = (op & FUTEX_PRIVATE_FLAG) ? 0 : FUTEX_PRIVATE_FLAG;
  return w[1] >= 1 && w[1] < MAX_PLAUSIBLE_WAITERS && w[2] == expected_private;
}

/* A pthread_rwlock_t whose futex word lies `offset` bytes in; its
 * __cur_writer into *writer. */
static __always_inline bool read_rwlock(__u64 uaddr, __u64 offset, __u32* writer) {
  __u32 w[14];
  if (uaddr < offset || bpf_probe_read_user(w, sizeof(w), (const void*)(uaddr - offset)) != 0)
    return false;
  if (!rwlock_layout(w)) return false;
  *writer = w[6];
  return true;
}

/* What the word at f->uaddr belongs to, and the owner it records. */
static __always_inline __u32 match_object(struct futex_wait_facts* f, __u32* owner) {
  __u32 command = f->op & FUTEX_COMMAND_MASK;
  __u64 uaddr = f->uaddr;
  *owner = 0;
  if (command == FUTEX_LOCK_PI || command == FUTEX_LOCK_PI2) {
    __u32 word;
    if (bpf_probe_read_user(&word, sizeof(word), (const void*)uaddr) != 0)
      return WAIT_OBJECT_UNKNOWN;
    *owner = word & FUTEX_TID_MASK;
    return WAIT_OBJECT_PI_MUTEX;
  }
  if (command == FUTEX_WAIT && (f->value == 2 || (f->value & FUTEX_WAITERS))) {
    __u32 m[5];
    if (bpf_probe_read_user(m, sizeof(m), (const void*)uaddr) == 0 && mutex_layout(m)) {
      *owner = m[2];
      return WAIT_OBJECT_MUTEX;
    }
    if (f->value & FUTEX_WAITERS) {
      *owner = f->value & FUTEX_TID_MASK; /* robust: the word is the owner's tid */
      return WAIT_OBJECT_MUTEX;
    }
    return WAIT_OBJECT_INTERNAL_LOCK;
  }
  if (command != FUTEX_WAIT_BITSET) return WAIT_OBJECT_UNKNOWN;
  if (f->value == 0) {
    /* A condvar group (either of two) or a semaphore, all waiting for 0. */
    __u32 w[15]; /* uaddr - 44 .. uaddr + 16 */
    if (uaddr >= 44 && bpf_probe_read_user(w, sizeof(w), (const void*)(uaddr - 44)) == 0) {
      if (condvar_layout(w, 1)) return WAIT_OBJECT_CONDVAR_GROUP1;
      if (condvar_layout(&w[1], 0)) return WAIT_OBJECT_CONDVAR_GROUP0;
      if (semaphore_layout(&w[11], f->op)) return WAIT_OBJECT_SEMAPHORE;
      return WAIT_OBJECT_UNKNOWN;
    }
    __u32 s[4];
    if (bpf_probe_read_user(s, sizeof(s), (const void*)uaddr) == 0 && semaphore_layout(s, f->op))
      return WAIT_OBJECT_SEMAPHORE;
    return WAIT_OBJECT_UNKNOWN;
  }
  /* Writers wait on __writers_futex and readers for a write phase's end on
   * __wrphase_futex, both for 1 | FUTEX_USED; a primary writer waits on
   * __wrphase_futex for FUTEX_USED; readers wait on __readers itself. */
  if (f->value == (1 | RWLOCK_FUTEX_USED)) {
    if (read_rwlock(uaddr, 12, owner)) return WAIT_OBJECT_RWLOCK_WRITERS;
    if (read_rwlock(uaddr, 8, owner)) return WAIT_OBJECT_RWLOCK_WRITE_PHASE;
  } else if (f->value == RWLOCK_FUTEX_USED) {
    if (read_rwlock(uaddr, 8, owner)) return WAIT_OBJECT_RWLOCK_WRITE_PHASE;
  }
  if (read_rwlock(uaddr, 0, owner)) return WAIT_OBJECT_RWLOCK_READERS;
  return WAIT_OBJECT_UNKNOWN;
}

/* format::waitObjectMayHaveHolder: a word that may have a holder, not a
 * condvar's, a semaphore's or a thread's. */
static __always_inline bool wait_object_may_have_holder(__u32 object) {
  return object != WAIT_OBJECT_CONDVAR_GROUP0 && object != WAIT_OBJECT_CONDVAR_GROUP1 &&
         object != WAIT_OBJECT_SEMAPHORE && object != WAIT_OBJECT_THREAD;
}

/* The futex wait the current task (about to block: sched_switch's prev) is
 * in, if any (1, else 0). A global function: the words it reads are on its
 * own stack, not on the switch program's, whose stack walks need the room. */
__noinline int read_futex_wait(struct futex_wait_facts* f) {
  if (!f) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  struct pt_regs* regs = (struct pt_regs*)bpf_task_pt_regs(task);
  if (!regs || regs->orig_ax != NR_FUTEX) return 0;
  __u32 op = (__u32)regs->si;
  if (!is_futex_wait_command(op & FUTEX_COMMAND_MASK)) return 0;
  f->uaddr = regs->di;
  f->op = op;
  f->value = (__u32)regs->dx;
  f->holder_tid = 0;
  f->holder_state = HOLDER_UNKNOWN;
  f->flags = 0;
  __u32 self = task->pid;
  __u32 owner = 0;
  f->object = match_object(f, &owner);
  /* A join waits, shared (not private), on the joined thread's tid word for
   * that tid; the recorder checks that it is a thread of this process. */
  if (f->object == WAIT_OBJECT_UNKNOWN && (op & FUTEX_COMMAND_MASK) == FUTEX_WAIT_BITSET &&
      !(op & FUTEX_PRIVATE_FLAG) && f->value != 0 && f->value <= FUTEX_TID_MASK) {
    f->object = WAIT_OBJECT_THREAD;
    owner = f->value;
  }
  if (owner != self) {
    f->holder_tid = owner;
    if (owner != 0) f->holder_state = thread_state(owner);
  }
  return 1;
}

#endif /* INCISE_BPF_FUTEX_WAIT_BPF_H */
