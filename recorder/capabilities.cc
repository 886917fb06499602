#include "recorder/capabilities.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace incise::recorder {

namespace {

bool hasEffective(const __user_cap_data_struct (&data)[2], int capability) {
  return (data[capability / 32].effective >> (capability % 32)) & 1u;
}

}  // namespace

Status checkRecordingCapabilities() {
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0)
    return Error(std::string("cannot read this process's capabilities (capget): ") +
                 std::strerror(errno));
  if (hasEffective(data, CAP_SYS_ADMIN)) return Status::ok();
  bool bpf = hasEffective(data, kCapBpf);
  bool perfmon = hasEffective(data, kCapPerfmon);
  if (bpf && perfmon) return Status::ok();
  std::string missing = !bpf && !perfmon ? "CAP_BPF and CAP_PERFMON"
                        : !bpf           ? "CAP_BPF"
                                         : "CAP_PERFMON";
  return Error(
      "missing " + missing +
      ": loading BPF programs and opening perf events needs them (or CAP_SYS_ADMIN).\n"
      "Run as root: sudo incise-record ...\n"
      "or grant them once: sudo setcap cap_bpf,cap_perfmon+ep $(command -v incise-record)");
}

Status dropCapabilitiesAfterAttach() {
  return keepOnlyCapabilities({CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_SYSLOG}, "after attaching");
}

Status keepOnlyCapabilities(std::initializer_list<int> kept, const char* step) {
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0)
    return Error(std::string("cannot read capabilities to drop them ") + step +
                 " (capget): " + std::strerror(errno));
  uint32_t keep[2] = {};
  for (int capability : kept) keep[capability / 32] |= 1u << (capability % 32);
  for (int i = 0; i < 2; ++i) {
    data[i].effective &= keep[i];
    data[i].permitted &= keep[i];
    data[i].inheritable = 0;
  }
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (syscall(SYS_capset, &header, data) != 0)
    return Error(std::string("cannot drop capabilities ") + step +
                 " (capset): " + std::strerror(errno));
  return Status::ok();
}

}  // namespace incise::recorder
