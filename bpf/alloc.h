/* Allocation records: what bpf/alloc.bpf.c sends to
 * recorder/sources/alloc_source.cc (conventions in bpf/events.h).
 *
 *   // recorder: a uprobe on each marker of libincise-preload.so
 *   bpf_program__attach_uprobe_opts(skel->progs.alloc_sampled, -1, library, 0, &opts);
 *   // opts.func_name = ALLOC_SAMPLED_SYMBOL
 *   case EVENT_ALLOC: onAllocation((const struct alloc_event *)data);
 */
#ifndef INCISE_BPF_ALLOC_H
#define INCISE_BPF_ALLOC_H

#include "bpf/events.h"

/* The preload library's marker functions (preload/alloc_markers.h). */
#define ALLOC_SAMPLED_SYMBOL "incise_alloc_sampled"
#define FREE_SAMPLED_SYMBOL "incise_free_sampled"

/* Only the allocation ring carries them. */
enum alloc_event_type {
  EVENT_ALLOC = 22,
  EVENT_FREE = 23,
};

/* header.time = the marker's call (the allocation returned); stack = the
 * user stack there: the marker, the library's allocation function, then the
 * program's caller at `caller` and its callers. */
struct alloc_event {
  struct event_header header;
  __u64 address; /* the block */
  __u64 size;    /* bytes asked for */
  __u64 weight;  /* bytes the sample stands for */
  __u64 caller;  /* return address into the code that called the allocator */
  struct event_stack stack;
};

/* header.time = the free, before the block is given back. */
struct free_event {
  struct event_header header;
  __u64 address;
};

#endif /* INCISE_BPF_ALLOC_H */
