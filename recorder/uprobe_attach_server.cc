#include "recorder/uprobe_attach_server.h"

#include <bpf/bpf.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <linux/securebits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "recorder/capabilities.h"
#include "recorder/descriptor_passing.h"
#include "recorder/libbpf_options.h"
#include "recorder/perf_event_open.h"

namespace incise::recorder {
namespace {

// The overflow user, nobody on Debian and most systems.
constexpr uid_t kNobody = 65534;

AttachReply refused(int error, const std::string& reason) {
  AttachReply reply;
  reply.error = error;
  std::snprintf(reply.reason, sizeof reply.reason, "%s", reason.c_str());
  return reply;
}

// The uprobe PMU's type and the config bit that makes a probe a return
// probe, from sysfs (the kernel's own description of the PMU).
struct UprobePmu {
  int type = -1;
  int retprobe_bit = -1;
};

UprobePmu readUprobePmu() {
  UprobePmu pmu;
  std::ifstream("/sys/bus/event_source/devices/uprobe/type") >> pmu.type;
  std::string format;
  std::ifstream("/sys/bus/event_source/devices/uprobe/format/retprobe") >> format;
  int bit = -1;
  if (std::sscanf(format.c_str(), "config:%d", &bit) == 1 && bit >= 0 && bit < 64)
    pmu.retprobe_bit = bit;
  return pmu;
}

class Server {
 public:
  explicit Server(int socket_fd) : socket_fd_(socket_fd), pmu_(readUprobePmu()) {}

  int run() {
    for (;;) {
      AttachRequest request;
      ReceivedMessage got = receiveWithDescriptors(socket_fd_, &request, sizeof request);
      if (got.bytes == 0) return 0;  // the recorder closed its end, or exited
      if (got.bytes < 0) return 1;
      UniqueFd link;
      AttachReply reply = handle(request, got, link);
      if (!sendWithDescriptor(socket_fd_, &reply, sizeof reply, link.get())) return 1;
    }
  }

 private:
  AttachReply handle(const AttachRequest& request, ReceivedMessage& got, UniqueFd& link) {
    if (got.truncated || got.bytes != static_cast<ssize_t>(sizeof request))
      return refused(EINVAL, "a request of the wrong size");
    if (got.fds.size() != 1) return refused(EINVAL, "a request without exactly one descriptor");
    if (request.reserved != 0 || request.retprobe > 1)
      return refused(EINVAL, "a request with unknown flags");
    switch (request.op) {
      case kAttachOpAddProgram:
        return addProgram(std::move(got.fds.front()));
      case kAttachOpAttach:
        return attach(request, got.fds.front().get(), link);
      default:
        return refused(EINVAL, "an unknown request");
    }
  }

  AttachReply addProgram(UniqueFd program) {
    if (attached_) return refused(EPERM, "programs are added before the first attach only");
    if (programs_.size() == kMaxAttachPrograms)
      return refused(ENOSPC, "more than " + std::to_string(kMaxAttachPrograms) + " programs");
    bpf_prog_info info{};
    uint32_t length = sizeof info;
    if (bpf_obj_get_info_by_fd(program.get(), &info, &length) != 0)
      return refused(EBADF, "the descriptor is not a BPF program");
    if (info.type != BPF_PROG_TYPE_KPROBE)
      return refused(EINVAL, "the program is not a uprobe program");
    AttachReply reply;
    reply.program = static_cast<uint32_t>(programs_.size());
    programs_.push_back(std::move(program));
    return reply;
  }

  AttachReply attach(const AttachRequest& request, int file_fd, UniqueFd& link) {
    attached_ = true;
    if (request.program >= programs_.size())
      return refused(ENOENT, "program " + std::to_string(request.program) + " is not known");
    struct stat info {};
    if (fstat(file_fd, &info) != 0) return refused(errno, "cannot stat the executable");
    if (!S_ISREG(info.st_mode)) return refused(EINVAL, "the executable is not a regular file");
    if (request.offset >= static_cast<uint64_t>(info.st_size))
      return refused(EINVAL, "offset " + std::to_string(request.offset) + " is past the file's " +
                                 std::to_string(info.st_size) + " bytes");
    if (pmu_.type < 0 || (request.retprobe && pmu_.retprobe_bit < 0))
      return refused(ENOTSUP, "this kernel has no uprobe PMU");

    // The descriptor's own file: the path names it, whatever its name now.
    const std::string path = "/proc/self/fd/" + std::to_string(file_fd);
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = static_cast<uint32_t>(pmu_.type);
    attr.config = request.retprobe ? 1ull << pmu_.retprobe_bit : 0;
    attr.config1 = reinterpret_cast<uintptr_t>(path.c_str());
    attr.config2 = request.offset;
    // Every process that runs the file: pid -1 with cpu 0, as libbpf asks.
    UniqueFd event(openPerfEvent(attr, -1, 0));
    if (!event) return refused(errno, "perf_event_open (uprobe)");
    auto opts = libbpfOptions<bpf_link_create_opts>();
    opts.perf_event.bpf_cookie = request.cookie;
    // The link holds the perf event: closing the link detaches the probe.
    link.reset(
        bpf_link_create(programs_[request.program].get(), event.get(), BPF_PERF_EVENT, &opts));
    if (!link) return refused(errno, "bpf_link_create (perf event)");
    return AttachReply{};
  }

  int socket_fd_;
  UprobePmu pmu_;
  std::vector<UniqueFd> programs_;
  bool attached_ = false;
};

}  // namespace

int runAttachHelper(int socket_fd, pid_t recorder) {
  // Root's uid would still own root's files without a capability: the
  // helper runs as nobody, its capability sets left as they are by the
  // change (no setuid fixup). A recorder that is not root keeps its user.
  if (getuid() == 0) {
    if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP) != 0) return 1;
    if (setgroups(0, nullptr) != 0 || setresgid(kNobody, kNobody, kNobody) != 0) return 1;
    if (setresuid(kNobody, kNobody, kNobody) != 0) return 1;
  }
  // A uprobe perf event needs CAP_PERFMON, and on Linux 6.18 CAP_SYS_ADMIN:
  // perf_event_open refuses it with EACCES under CAP_PERFMON alone.
  if (!keepOnlyCapabilities({kCapPerfmon, CAP_SYS_ADMIN}, "in the uprobe attacher")) return 1;
  // After the credential change, which would clear it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != recorder) return 1;  // the recorder died before the line above
  return Server(socket_fd).run();
}

}  // namespace incise::recorder
