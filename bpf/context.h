/* Context values (--context NAME=SYMBOL): thread-local variables of the
 * targets that bpf/context.bpf.h reads at events, what the recorder
 * (recorder/context/context_source.cc) puts in `context_processes` for each
 * target and the record it receives when a thread's value changes.
 *
 * Plain C with fixed-width fields (see bpf/events.h for the conventions).
 *
 *   struct context_process where = {.tls_offset = {-16}, .size = {8}};
 *   bpf_map_update_elem(context_processes_fd, &pid, &where, BPF_ANY);
 */
#ifndef INCISE_BPF_CONTEXT_H
#define INCISE_BPF_CONTEXT_H

#include "bpf/events.h"

/* --context options a recording can hold: each costs one user read per
 * event of a target thread. */
#define MAX_CONTEXTS 4
/* Processes with context variables at once. A thread's last values are in
 * its task local storage (one struct context_thread per target thread that
 * read them, freed with the thread). */
#define MAX_CONTEXT_PROCESSES 4096

/* A DTV entry (glibc's dtv_t: a counter, or {val, to_free}): the block of
 * module m is dtv[m].val; dtv[-1] counts the entries after it. */
#define CONTEXT_DTV_ENTRY_BYTES 16
/* glibc's TLS_DTV_UNALLOCATED: the thread has not touched the module yet. */
#define CONTEXT_DTV_UNALLOCATED (~0ull)

/* How a slot's variable is read (recorder's ContextReading). */
#define CONTEXT_READ_INTEGER 0
/* The variable points to an OpenTelemetry thread context record (OTEP
 * 4947): trace_id[16], span_id[8], valid (1: valid), trace_flags, ...; the
 * value is the trace id's last 8 bytes (its first 8 in the event's
 * value_high) or the span id, big-endian; 0 for a null pointer or a record
 * that is not valid. */
#define CONTEXT_READ_OTEL_TRACE_ID 1
#define CONTEXT_READ_OTEL_SPAN_ID 2
#define CONTEXT_OTEL_RECORD_BYTES 26

/* Where a process keeps each context variable; size 0 = the process has no
 * such variable. Static TLS (tls_module 0): at thread pointer (FS base)
 * plus tls_offset. A library opened with dlopen (tls_module = its module
 * id): at dtv[tls_module].val + tls_offset, with the thread's
 * dtv = *(FS base + dtv_offset). The offsets hold for the executable file
 * with inode exe_inode (0: any): a process that execs another is not read
 * until the recorder has looked at it. */
struct context_process {
  __s64 tls_offset[MAX_CONTEXTS];
  __u64 exe_inode;
  __u8 size[MAX_CONTEXTS]; /* 1, 2, 4 or 8 bytes */
  __u32 dtv_offset;
  __u32 tls_module[MAX_CONTEXTS];
  __u8 reading[MAX_CONTEXTS]; /* CONTEXT_READ_* */
  __u8 reserved[4];
};

/* A thread's values as last read, and when (bpf_ktime_get_ns). */
struct context_thread {
  __u64 value[MAX_CONTEXTS];
  __u64 read_time[MAX_CONTEXTS]; /* 0 = not read yet */
  __u64 trace_id_high;           /* the otel trace id's first 8 bytes (one such slot at most) */
};

/* header = the thread at the read that saw `value` first; since = its last
 * read that saw the previous value (0: the thread's first read). */
struct context_event {
  struct event_header header;
  __u32 slot; /* which --context, in command-line order */
  __u32 reserved;
  __u64 value;
  __u64 since;
  __u64 value_high; /* CONTEXT_READ_OTEL_TRACE_ID: the trace id's first 8 bytes; else 0 */
};

#endif /* INCISE_BPF_CONTEXT_H */
