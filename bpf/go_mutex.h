/* Go mutex records: what bpf/go_mutex.bpf.c sends to
 * recorder/sources/go_mutex_source.cc on its own ring buffer.
 *
 * Plain C with fixed-width fields (see bpf/events.h for the conventions).
 *
 *   // recorder: one attach per probe and binary, the cookie is the offset
 *   // of goid in that binary's runtime.g (GO_NO_GOID: not known)
 *   opts.bpf_cookie = goid_offset;
 *   // ring buffer: EVENT_GO_MUTEX_WAIT carries a struct go_mutex_wait_event
 */
#ifndef INCISE_BPF_GO_MUTEX_H
#define INCISE_BPF_GO_MUTEX_H

#include "bpf/events.h"

/* Only the Go mutex ring carries it. */
enum go_mutex_event_type {
  EVENT_GO_MUTEX_WAIT = 20,
};

/* An attach cookie saying that the binary's goid offset is not known. */
#define GO_NO_GOID 0xffffffffffffffffull

/* A contended Lock that returned from lockSlow. header.time = lockSlow's
 * RET; stack = the user stack there, the caller of Lock first after the
 * RET itself. */
struct go_mutex_wait_event {
  struct event_header header;
  __u64 request_ns;    /* lockSlow's entry */
  __u64 mutex;         /* the *sync.Mutex */
  __u64 goid;          /* the waiting goroutine; 0 = not known */
  __u64 releaser_goid; /* the goroutine of the last slow unlock since the entry; 0 = none */
  __u32 releaser_tid;  /* its thread */
  __u32 reserved;
  struct event_stack stack;
};

#endif /* INCISE_BPF_GO_MUTEX_H */
