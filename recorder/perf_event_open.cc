#include "recorder/perf_event_open.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace incise::recorder {

int openPerfEvent(perf_event_attr& attr, int pid, int cpu, unsigned long flags, int group_fd) {
  return static_cast<int>(
      syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, flags | PERF_FLAG_FD_CLOEXEC));
}

}  // namespace incise::recorder
