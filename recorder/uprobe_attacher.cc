#include "recorder/uprobe_attacher.h"

#include <linux/close_range.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "recorder/descriptor_passing.h"
#include "recorder/uprobe_attach_server.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kWhat = "uprobe attacher";

Error attacherError(const std::string& step, int error) {
  return Error(std::string(kWhat) + ": " + step + ": " + std::strerror(error));
}

// Threads of this process; 0 when /proc cannot tell.
size_t threadCount() {
  std::error_code error;
  size_t count = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", error), end; !error && it != end;
       it.increment(error))
    ++count;
  return error ? 0 : count;
}

// In the forked child: nothing of the recorder but the socket.
[[noreturn]] void becomeHelper(int socket_fd, pid_t recorder) {
  // The terminal's Ctrl-C reaches the whole process group: the helper ends
  // when the recorder does, through its socket, not before.
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  if (dup2(socket_fd, STDERR_FILENO + 1) < 0) _exit(1);
  syscall(SYS_close_range, STDERR_FILENO + 2, ~0u, 0);
  _exit(runAttachHelper(STDERR_FILENO + 1, recorder));
}

}  // namespace

Result<UprobeAttacher> UprobeAttacher::start() {
  if (size_t threads = threadCount(); threads != 1)
    return Error(std::string(kWhat) + ": must start while the recorder has one thread (it has " +
                 std::to_string(threads) + ")");
  int ends[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0)
    return attacherError("socketpair", errno);
  UniqueFd mine(ends[0]), theirs(ends[1]);
  const pid_t recorder = getpid();
  pid_t pid = fork();
  if (pid < 0) return attacherError("fork", errno);
  if (pid == 0) becomeHelper(theirs.release(), recorder);
  return UprobeAttacher(std::move(mine), pid);
}

UprobeAttacher::UprobeAttacher(UprobeAttacher&& other) noexcept
    : socket_(std::move(other.socket_)), pid_(std::exchange(other.pid_, -1)) {}

UprobeAttacher::~UprobeAttacher() {
  socket_.reset();  // the helper reads the end of its socket and exits
  if (pid_ > 0) {
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

Result<UprobeAttacher::Answer> UprobeAttacher::exchange(const void* request, size_t size, int fd) {
  if (!sendWithDescriptor(socket_.get(), request, size, fd))
    return attacherError("send a request", errno);
  AttachReply reply;
  ReceivedMessage got = receiveWithDescriptors(socket_.get(), &reply, sizeof reply);
  if (got.bytes == 0) return Error(std::string(kWhat) + ": the helper exited");
  if (got.bytes < 0) return attacherError("read its answer", errno);
  if (got.truncated || got.fds.size() > 1)
    return Error(std::string(kWhat) + ": an answer with more than it should carry");
  Answer result;
  if (!got.fds.empty()) result.link = std::move(got.fds.front());
  if (got.bytes != static_cast<ssize_t>(sizeof reply))
    return Error(std::string(kWhat) + ": an answer of the wrong size");
  reply.reason[sizeof reply.reason - 1] = '\0';
  if (reply.error != 0)
    return Error(std::string(kWhat) + ": " + reply.reason + ": " + std::strerror(reply.error));
  result.program = reply.program;
  return result;
}

Result<uint32_t> UprobeAttacher::addProgram(int program_fd) {
  AttachRequest request;
  request.op = kAttachOpAddProgram;
  INCISE_ASSIGN_OR_RETURN(Answer answer, exchange(&request, sizeof request, program_fd));
  return answer.program;
}

Result<UniqueFd> UprobeAttacher::attach(uint32_t program, int file_fd, uint64_t offset,
                                        bool retprobe, uint64_t cookie) {
  AttachRequest request;
  request.op = kAttachOpAttach;
  request.program = program;
  request.offset = offset;
  request.cookie = cookie;
  request.retprobe = retprobe ? 1 : 0;
  INCISE_ASSIGN_OR_RETURN(Answer answer, exchange(&request, sizeof request, file_fd));
  if (!answer.link) return Error(std::string(kWhat) + ": an attach answered without its link");
  return std::move(answer.link);
}

}  // namespace incise::recorder
