// The uprobe attacher with real BPF: a helper forked by this test attaches
// a counting-free program (its runs counted by the kernel's BPF stats) to
// a function of this very executable, hands back the link, and the probe
// goes when the link is closed. Bad requests come back as errors, the
// helper keeps only what attaching needs, and it never outlives its
// recorder, even one that is killed.
// Label "integration": skips without root/BPF, fails instead when CI=true.
#include "recorder/uprobe_attacher.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "base/unique_fd.h"
#include "objfile/elf_reader.h"
#include "recorder/probes/lock_probe_spec.h"
#include "tests/recorder/recorder_test_support.h"

// Probed in this executable; the asm keeps the calls from being folded.
extern "C" __attribute__((noinline)) int attacherProbedFunction(int x) {
  asm volatile("" : "+r"(x));
  return x + 1;
}

namespace incise::recorder {
namespace {

bpf_insn insn(uint8_t code, uint8_t dst, int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.imm = imm;
  return i;
}

// return 0: a uprobe program whose runs only the kernel's stats count.
UniqueFd loadUprobeProgram(bpf_prog_type type = BPF_PROG_TYPE_KPROBE) {
  const bpf_insn program[] = {
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0),
      insn(BPF_JMP | BPF_EXIT, 0, 0),
  };
  return UniqueFd(bpf_prog_load(type, "attacher_test", "GPL", program,
                                sizeof(program) / sizeof(program[0]), nullptr));
}

uint64_t runCount(int program_fd) {
  bpf_prog_info info{};
  uint32_t length = sizeof info;
  if (bpf_obj_get_info_by_fd(program_fd, &info, &length) != 0) return ~0ull;
  return info.run_cnt;
}

uint64_t probedOffset() {
  Result<format::ObjectSymbols> object = objfile::readElfObject("/proc/self/exe");
  if (!object) return 0;
  Result<uint64_t> offset = functionFileOffset(*object, "attacherProbedFunction", "test");
  return offset ? *offset : 0;
}

void callProbed(int times) {
  for (int i = 0; i < times; ++i) EXPECT_EQ(attacherProbedFunction(i), i + 1);
}

std::string statusLine(pid_t pid, const std::string& key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(key + ":", 0) == 0) return line.substr(key.size() + 1);
  }
  return "";
}

TEST(UprobeAttacher, AttachesThroughTheHelperAndClosingTheLinkDetaches) {
  INCISE_REQUIRE_RECORDING();
  const uint64_t offset = probedOffset();
  ASSERT_NE(offset, 0u);
  UniqueFd stats(bpf_enable_stats(BPF_STATS_RUN_TIME));
  ASSERT_TRUE(stats) << std::strerror(errno);
  UniqueFd program = loadUprobeProgram();
  ASSERT_TRUE(program) << std::strerror(errno);

  Result<UprobeAttacher> attacher = UprobeAttacher::start();
  ASSERT_TRUE(attacher) << attacher.error().message();
  Result<uint32_t> id = attacher->addProgram(program.get());
  ASSERT_TRUE(id) << id.error().message();
  UniqueFd exe(open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(exe);
  Result<UniqueFd> link = attacher->attach(*id, exe.get(), offset, false, 42);
  ASSERT_TRUE(link) << link.error().message();

  const uint64_t before = runCount(program.get());
  callProbed(3);
  EXPECT_EQ(runCount(program.get()), before + 3);

  bpf_link_info info{};
  uint32_t length = sizeof info;
  ASSERT_EQ(bpf_obj_get_info_by_fd(link->get(), &info, &length), 0) << std::strerror(errno);
  EXPECT_EQ(info.type, BPF_LINK_TYPE_PERF_EVENT);
  // The helper drops its own copy of a link once sent, before it reads the
  // next request: this refused one makes sure it has.
  ASSERT_FALSE(attacher->attach(*id + 1, exe.get(), offset, false, 0));
  link->reset();
  // The link is gone from the kernel, and with it the probe.
  EXPECT_LT(bpf_link_get_fd_by_id(info.id), 0);
  EXPECT_EQ(errno, ENOENT);
  callProbed(3);
  EXPECT_EQ(runCount(program.get()), before + 3);
}

TEST(UprobeAttacher, RefusesBadRequestsWithTheirReasonAndServesTheNextOne) {
  INCISE_REQUIRE_RECORDING();
  const uint64_t offset = probedOffset();
  ASSERT_NE(offset, 0u);
  UniqueFd program = loadUprobeProgram();
  UniqueFd socket_filter = loadUprobeProgram(BPF_PROG_TYPE_SOCKET_FILTER);
  ASSERT_TRUE(program && socket_filter) << std::strerror(errno);
  Result<UprobeAttacher> attacher = UprobeAttacher::start();
  ASSERT_TRUE(attacher) << attacher.error().message();

  UniqueFd null(open("/dev/null", O_RDONLY | O_CLOEXEC));
  Result<uint32_t> not_bpf = attacher->addProgram(null.get());
  ASSERT_FALSE(not_bpf);
  EXPECT_NE(not_bpf.error().message().find("not a BPF program"), std::string::npos)
      << not_bpf.error().message();
  Result<uint32_t> not_uprobe = attacher->addProgram(socket_filter.get());
  ASSERT_FALSE(not_uprobe);
  EXPECT_NE(not_uprobe.error().message().find("not a uprobe program"), std::string::npos)
      << not_uprobe.error().message();
  Result<uint32_t> id = attacher->addProgram(program.get());
  ASSERT_TRUE(id) << id.error().message();

  UniqueFd exe(open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
  struct stat info {};
  ASSERT_EQ(fstat(exe.get(), &info), 0);
  auto refusal = [&](uint32_t program_id, int file, uint64_t at) {
    Result<UniqueFd> link = attacher->attach(program_id, file, at, false, 0);
    return link ? std::string("attached") : link.error().message();
  };
  UniqueFd directory(open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  EXPECT_NE(refusal(*id, directory.get(), 0).find("not a regular file"), std::string::npos);
  EXPECT_NE(refusal(*id + 7, exe.get(), offset).find("is not known"), std::string::npos);
  EXPECT_NE(refusal(*id, exe.get(), static_cast<uint64_t>(info.st_size)).find("past the file"),
            std::string::npos);
  EXPECT_NE(refusal(*id, exe.get(), ~0ull).find("past the file"), std::string::npos);
  // The set of programs is fixed once attaching began.
  Result<uint32_t> late = attacher->addProgram(program.get());
  ASSERT_FALSE(late);
  EXPECT_NE(late.error().message().find("before the first attach"), std::string::npos)
      << late.error().message();

  Result<UniqueFd> link = attacher->attach(*id, exe.get(), offset, false, 0);
  EXPECT_TRUE(link) << link.error().message();
}

TEST(UprobeAttacher, TheHelperRunsAsNobodyWithOnlyTheAttachCapabilities) {
  INCISE_REQUIRE_RECORDING();
  Result<UprobeAttacher> attacher = UprobeAttacher::start();
  ASSERT_TRUE(attacher) << attacher.error().message();
  // It answers a request only once its set-up is done.
  UniqueFd program = loadUprobeProgram();
  ASSERT_TRUE(attacher->addProgram(program.get()));
  const pid_t helper = attacher->pid();
  EXPECT_EQ(statusLine(helper, "Uid"), "\t65534\t65534\t65534\t65534");
  EXPECT_EQ(statusLine(helper, "Gid"), "\t65534\t65534\t65534\t65534");
  // CAP_SYS_ADMIN (21) and CAP_PERFMON (38).
  EXPECT_EQ(statusLine(helper, "CapEff"), "\t0000004000200000");
  EXPECT_EQ(statusLine(helper, "CapPrm"), "\t0000004000200000");
  EXPECT_EQ(statusLine(helper, "CapInh"), "\t0000000000000000");
  EXPECT_EQ(statusLine(helper, "Threads"), "\t1");
}

TEST(UprobeAttacher, TheHelperEndsWithItsOwner) {
  INCISE_REQUIRE_RECORDING();
  pid_t helper = -1;
  {
    Result<UprobeAttacher> attacher = UprobeAttacher::start();
    ASSERT_TRUE(attacher) << attacher.error().message();
    helper = attacher->pid();
  }
  // Destroyed: the helper was reaped.
  EXPECT_EQ(kill(helper, 0), -1);
  EXPECT_EQ(errno, ESRCH);

  // An owner killed outright: the helper, adopted by this test (a
  // subreaper), exits all the same.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  pid_t owner = fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    Result<UprobeAttacher> attacher = UprobeAttacher::start();
    pid_t pid = attacher ? attacher->pid() : -1;
    if (write(write_end.get(), &pid, sizeof pid) != sizeof pid) _exit(1);
    raise(SIGKILL);
  }
  write_end.reset();
  pid_t orphan = -1;
  ASSERT_EQ(read(read_end.get(), &orphan, sizeof orphan), static_cast<ssize_t>(sizeof orphan));
  ASSERT_GT(orphan, 0);
  int status = 0;
  ASSERT_EQ(waitpid(owner, &status, 0), owner);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ASSERT_EQ(waitpid(orphan, &status, 0), orphan) << std::strerror(errno);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(UprobeAttacher, StartsOnlyWhileItsOwnerHasOneThread) {
  std::promise<void> stop;
  std::thread other([done = stop.get_future()]() mutable { done.wait(); });
  Result<UprobeAttacher> attacher = UprobeAttacher::start();
  stop.set_value();
  other.join();
  ASSERT_FALSE(attacher);
  EXPECT_NE(attacher.error().message().find("one thread"), std::string::npos)
      << attacher.error().message();
}

}  // namespace
}  // namespace incise::recorder
