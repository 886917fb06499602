/* Page-fault records: what bpf/page_faults.bpf.c sends to
 * recorder/sources/page_fault_source.cc (conventions in bpf/events.h).
 *
 *   case EVENT_PAGE_FAULT: onFault((const struct page_fault_event *)data);
 */
#ifndef INCISE_BPF_PAGE_FAULTS_H
#define INCISE_BPF_PAGE_FAULTS_H

#include "bpf/events.h"

/* header.time = the fault; stack = kernel frames (the fault path) then user
 * frames (the instruction that faulted and its callers). */
struct page_fault_event {
  struct event_header header;
  __u64 address; /* the faulting data address (PERF_SAMPLE_ADDR) */
  struct event_stack stack;
};

#endif /* INCISE_BPF_PAGE_FAULTS_H */
