// perf_event_open(2), which glibc does not wrap: one call for every source
// that opens perf events (cpu samples, mmap records, page faults, uprobes).
//
//   int fd = openPerfEvent(attr, /*pid=*/-1, cpu);
//   if (fd < 0) return libbpfError("...: perf_event_open", errno);
#pragma once

#include <linux/perf_event.h>

namespace incise::recorder {

// Opens `attr` for `pid` (-1: every process) on `cpu` (-1: any), in the
// group of `group_fd`'s event (-1: none, a leader of its own); the
// descriptor is always close-on-exec, so a command the recorder starts never
// inherits it. Returns it, or -1 with errno set.
int openPerfEvent(perf_event_attr& attr, int pid, int cpu, unsigned long flags = 0,
                  int group_fd = -1);

}  // namespace incise::recorder
