// Attaching uprobes after the recorder gave up its capabilities: a helper
// process, forked at start while the recorder has one thread, that runs as
// nobody with only CAP_PERFMON and CAP_SYS_ADMIN (a uprobe perf event needs
// the latter on Linux 6.18) and does nothing but attach
// (recorder/uprobe_attach_server.h serves the requests). Programs exec'd during -a or --cgroup get
// their Go probes through it, while the recorder itself parses their files with no capability to
// load programs or open perf events.
//
//   Result<UprobeAttacher> attacher = UprobeAttacher::start();   // one thread
//   Result<uint32_t> id = attacher->addProgram(bpf_program__fd(prog));  // before the drop
//   ... dropCapabilitiesAfterAttach() ...
//   UniqueFd exe(open("/proc/PID/exe", O_RDONLY | O_CLOEXEC));
//   Result<UniqueFd> link = attacher->attach(*id, exe.get(), offset, false, cookie);
//   // the uprobe stays while `link` is open; closing it detaches
//
// The helper exits when its socket closes: when the attacher is destroyed,
// and when the recorder dies however it dies (the kernel closes the socket).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <utility>

#include "base/status.h"
#include "base/unique_fd.h"

namespace incise::recorder {

class UprobeAttacher {
 public:
  // Forks the helper. An error when the calling process has more than one
  // thread (a fork would copy locks other threads hold) or the fork fails.
  static Result<UprobeAttacher> start();

  UprobeAttacher(UprobeAttacher&& other) noexcept;
  UprobeAttacher& operator=(UprobeAttacher&&) = delete;
  UprobeAttacher(const UprobeAttacher&) = delete;
  ~UprobeAttacher();  // closes the socket, then reaps the helper

  // Hands the helper a loaded uprobe program (the helper holds its own copy
  // of the descriptor): the id that attach names it by. Accepted only before
  // the first attach, so the set of programs is fixed while the recorder
  // parses untrusted input.
  Result<uint32_t> addProgram(int program_fd);

  // Attaches program `program` at `offset` in the open regular file
  // `file_fd`, for every process that runs it, with `cookie` as its
  // bpf_get_attach_cookie; the bpf link that keeps it attached. The helper
  // closes its own copy of the link once it has sent it, before it reads
  // the next request.
  Result<UniqueFd> attach(uint32_t program, int file_fd, uint64_t offset, bool retprobe,
                          uint64_t cookie);

  pid_t pid() const { return pid_; }

 private:
  UprobeAttacher(UniqueFd socket, pid_t pid) : socket_(std::move(socket)), pid_(pid) {}
  struct Answer {
    uint32_t program = 0;  // an added program's id
    UniqueFd link;         // an attach's
  };
  // Sends one request with descriptor `fd`; its answer, or its refusal.
  Result<Answer> exchange(const void* request, size_t size, int fd);

  UniqueFd socket_;
  pid_t pid_ = -1;
};

}  // namespace incise::recorder
