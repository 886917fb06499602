// The helper side of recorder/uprobe_attacher.h: the requests it takes on
// its SOCK_SEQPACKET socket and the loop that answers them.
//
// Each request is one AttachRequest with exactly one descriptor
// (SCM_RIGHTS): the program for kAddProgram, the executable for kAttach.
// Each answer is one AttachReply, with the bpf link as its descriptor when
// an attach succeeded. The helper reads nothing of the traced programs: it
// checks the request's numbers, that the executable is a regular file and
// the offset inside it, opens the uprobe through the descriptor itself
// (/proc/self/fd/N: no path is resolved again) and links the program to it.
//
//   _exit(runAttachHelper(socket_fd, recorder_pid));   // in the forked helper
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace incise::recorder {

enum AttachOp : uint32_t {
  kAttachOpAddProgram = 1,
  kAttachOpAttach = 2,
};

struct AttachRequest {
  uint32_t op = 0;
  uint32_t program = 0;   // kAttachOpAttach: an id kAttachOpAddProgram answered
  uint64_t offset = 0;    // kAttachOpAttach: the probed instruction's file offset
  uint64_t cookie = 0;    // kAttachOpAttach: the program's bpf_get_attach_cookie
  uint32_t retprobe = 0;  // 0 or 1
  uint32_t reserved = 0;  // 0
};

struct AttachReply {
  int32_t error = 0;      // 0, or an errno value
  uint32_t program = 0;   // kAttachOpAddProgram: the program's id
  char reason[120] = {};  // NUL-terminated: why, when error is not 0
};

// Programs one helper holds.
inline constexpr uint32_t kMaxAttachPrograms = 16;

// Becomes the unprivileged user (nobody) when root, keeps only CAP_PERFMON
// and CAP_SYS_ADMIN (of those the recorder had), dies with `recorder`,
// then answers requests until the socket closes (0) or fails (1): the
// helper's exit code.
int runAttachHelper(int socket_fd, pid_t recorder);

}  // namespace incise::recorder
