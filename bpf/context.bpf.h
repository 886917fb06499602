/* Context values (--context NAME=SYMBOL) read at the events of target
 * threads: a thread-local variable of the program, such as the id of the
 * request the thread serves, at thread pointer (the task's FS base, as for
 * goroutine ids in bpf/goroutine.bpf.h) plus the offset the recorder found
 * (recorder/context/tls_locator.h); a variable of a library opened with
 * dlopen through the thread's DTV (two reads more). A thread that has not
 * touched such a library's variables has no block for it yet: it is not
 * read (its value stays unknown), and not counted as a failed read.
 *
 * A value is read at every event of the current thread that includes this
 * header, but sent only when it differs from the thread's previous read: a
 * request id constant for a request costs one record per request and
 * thread, not one per event. The record says when the value was first
 * seen and when the previous one was last seen, so the change lies
 * between. Only the current thread is read (its address space is the
 * current one): a switch reads prev, which leaves; next cannot have
 * changed its value while off the CPU, so its last read still holds. A read
 * that fails (a page not present) is counted
 * in `context_drops` as LOST_CONTEXT_READS.
 *
 * The maps are one set for every object: the recorder creates them and
 * points each object's copies at them before load
 * (recorder/context/context_maps.h). Recordings without --context pay
 * nothing: `context_slots` is 0 in .rodata and the verifier drops the rest.
 *
 *   read_contexts(tgid, tid);   // at an event of the current thread
 */
#ifndef INCISE_BPF_CONTEXT_BPF_H
#define INCISE_BPF_CONTEXT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "bpf/context.h"
#include "bpf/event_output.bpf.h"

/* How many --context options the recording has (0: none, nothing is read). */
const volatile __u32 context_slots = 0;

/* Declared at their smallest: the recorder replaces them with its own. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1);
  __type(key, __u32); /* tgid */
  __type(value, struct context_process);
} context_processes SEC(".maps");

/* Each target thread's last values, in its task local storage: made at its
 * first read, freed with the thread. */
struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct context_thread);
} context_threads SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096);
} context_events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LOST_SOURCE_SLOTS);
  __type(key, __u32);
  __type(value, __u64);
} context_drops SEC(".maps");

static __always_inline __u64 context_value_of_size(__u64 raw, __u8 size) {
  if (size >= 8) return raw;
  return raw & ((1ull << (size * 8)) - 1);
}

/* Where the variable of `slot` is in the current thread, or 0 when the
 * thread has no block for it (a dlopen'd module it has not touched). */
static __always_inline __u64 context_address(const struct context_process* where, __u32 slot,
                                             __u64 fs_base, bool* failed) {
  __u32 module = where->tls_module[slot];
  if (module == 0) return fs_base + where->tls_offset[slot];
  __u64 dtv = 0, entries = 0, block = 0;
  if (bpf_probe_read_user(&dtv, sizeof(dtv), (const void*)(fs_base + where->dtv_offset)) != 0 ||
      dtv == 0 ||
      bpf_probe_read_user(&entries, sizeof(entries),
                          (const void*)(dtv - CONTEXT_DTV_ENTRY_BYTES)) != 0) {
    *failed = true;
    return 0;
  }
  /* A DTV made before the module was loaded: the thread has no block yet. */
  if (module > entries) return 0;
  if (bpf_probe_read_user(&block, sizeof(block),
                          (const void*)(dtv + (__u64)module * CONTEXT_DTV_ENTRY_BYTES)) != 0) {
    *failed = true;
    return 0;
  }
  if (block == 0 || block == CONTEXT_DTV_UNALLOCATED) return 0;
  return block + where->tls_offset[slot];
}

/* --context otel: the value from the record `pointer` points to; a trace
 * id's first 8 bytes in *high. */
static __always_inline __u64 otel_context_value(__u64 pointer, __u8 reading, __u64* high,
                                                bool* failed) {
  if (pointer == 0) return 0;
  __u8 record[CONTEXT_OTEL_RECORD_BYTES] = {};
  if (bpf_probe_read_user(record, sizeof(record), (const void*)pointer) != 0) {
    *failed = true;
    return 0;
  }
  if (record[24] != 1) return 0; /* valid */
  __u64 bytes = 0;
  if (reading == CONTEXT_READ_OTEL_TRACE_ID) {
    __builtin_memcpy(&bytes, &record[0], sizeof(bytes));
    *high = __builtin_bswap64(bytes); /* W3C ids are big-endian bytes */
  }
  __builtin_memcpy(&bytes, &record[reading == CONTEXT_READ_OTEL_SPAN_ID ? 16 : 8], sizeof(bytes));
  return __builtin_bswap64(bytes);
}

/* A call of its own, not inlined: its locals are off the stack of the
 * callers' deepest call chains (the scheduler program's is at the
 * verifier's 512 bytes). */
static __noinline void read_context_values(__u32 tgid, __u32 tid) {
  const struct context_process* where = bpf_map_lookup_elem(&context_processes, &tgid);
  if (!where) return;
  /* Plain loads through the task's BTF pointers (the verifier guards them
   * against faults), not a probe-read helper call per hop. */
  struct task_struct* task = bpf_get_current_task_btf();
  struct mm_struct* mm = task->mm;
  /* An exiting thread has left its address space already. */
  if (!mm) return;
  if (where->exe_inode != 0) {
    struct file* exe = mm->exe_file;
    if (!exe || exe->f_inode->i_ino != where->exe_inode) return;
  }
  __u64 fs_base = task->thread.fsbase;
  /* Not set yet: a new image before its loader has made its TLS. */
  if (fs_base == 0) return;
  __u64 now = bpf_ktime_get_ns();
  struct context_thread* last =
      bpf_task_storage_get(&context_threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  /* None: no memory, or the storage busy on this CPU (a program run inside
   * another's use of it); the next event reads again. */
  if (!last) return;
  for (__u32 slot = 0; slot < MAX_CONTEXTS && slot < context_slots; ++slot) {
    __u8 size = where->size[slot];
    if (size == 0) continue;
    bool failed = false;
    __u64 address = context_address(where, slot, fs_base, &failed);
    __u64 raw = 0;
    if (failed ||
        (address != 0 && bpf_probe_read_user(&raw, sizeof(raw), (const void*)address) != 0)) {
      count_drop_in(&context_drops, LOST_CONTEXT_READS);
      continue;
    }
    if (address == 0) continue;
    __u8 reading = where->reading[slot];
    __u64 high = 0;
    __u64 value = reading == CONTEXT_READ_INTEGER
                      ? context_value_of_size(raw, size)
                      : otel_context_value(raw, reading, &high, &failed);
    if (failed) {
      count_drop_in(&context_drops, LOST_CONTEXT_READS);
      continue;
    }
    __u64 since = last->read_time[slot];
    if (since != 0 && last->value[slot] == value &&
        (reading != CONTEXT_READ_OTEL_TRACE_ID || last->trace_id_high == high)) {
      last->read_time[slot] = now;
      continue;
    }
    /* Kept as the thread's value only once sent, so a lost record is sent
     * again at the next read. Written in the ring, not on the stack: the
     * scheduler program's call chain is at the verifier's 512 bytes. */
    struct context_event* e = bpf_ringbuf_reserve(&context_events, sizeof(*e), 0);
    if (!e) {
      count_drop_in(&context_drops, LOST_CONTEXT);
      continue;
    }
    __builtin_memset(e, 0, sizeof(*e));
    e->header.type = EVENT_CONTEXT;
    e->header.cpu = bpf_get_smp_processor_id();
    e->header.time = now;
    e->header.pid = tgid;
    e->header.tid = tid;
    e->slot = slot;
    e->value = value;
    e->since = since;
    e->value_high = high;
    bpf_ringbuf_submit(e, ring_wakeup_flag(&context_events));
    last->value[slot] = value;
    last->read_time[slot] = now;
    if (reading == CONTEXT_READ_OTEL_TRACE_ID) last->trace_id_high = high;
  }
}

static __always_inline void read_contexts(__u32 tgid, __u32 tid) {
  if (context_slots != 0) read_context_values(tgid, tid);
}

#endif /* INCISE_BPF_CONTEXT_BPF_H */
