// The recorder's user-stack walker (walk_user_stack, bpf/stack.bpf.h) must
// return exactly the kernel walker's frames: bpf/user_walk_check.bpf.c runs
// both on the same futex entries, switches and cpu-clock samples of every
// process while the lock and CPU workloads run, and counts differences. A
// uretprobe on custom_lock's my_spin_acquire (built with frame pointers, so
// the walk passes through its frame) stays attached meanwhile: walks inside
// it must put back the caller's return address that the uretprobe
// trampoline stands in for, as the kernel's walker does.
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "recorder/libbpf_options.h"
#include "tests/recorder/recorder_test_support.h"
#include "user_walk_check.skel.h"

namespace incise::testing {
namespace {

struct LinkDeleter {
  void operator()(bpf_link* link) const { bpf_link__destroy(link); }
};

int openCpuClock(int cpu) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = 999;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

TEST(UserWalkCheck, RecorderWalkerReturnsTheKernelWalkersFrames) {
  INCISE_REQUIRE_RECORDING();
  std::unique_ptr<user_walk_check_bpf, void (*)(user_walk_check_bpf*)> skel(
      user_walk_check_bpf__open_and_load(), &user_walk_check_bpf__destroy);
  ASSERT_TRUE(skel) << "open and load bpf/user_walk_check.bpf.c";
  std::vector<std::unique_ptr<bpf_link, LinkDeleter>> links;
  links.emplace_back(bpf_program__attach(skel->progs.futex_entry));
  links.emplace_back(bpf_program__attach(skel->progs.switch_out));
  std::string workloads = INCISE_WORKLOADS_DIR;
  const std::string custom_lock = workloads + "/custom_lock";
  auto uprobe = recorder::libbpfOptions<bpf_uprobe_opts>();
  uprobe.func_name = "my_spin_acquire";
  links.emplace_back(bpf_program__attach_uprobe_opts(skel->progs.acquire_entry, -1,
                                                     custom_lock.c_str(), 0, &uprobe));
  auto uretprobe = recorder::libbpfOptions<bpf_uprobe_opts>();
  uretprobe.retprobe = true;
  uretprobe.func_name = "my_spin_acquire";
  links.emplace_back(bpf_program__attach_uprobe_opts(skel->progs.acquire_return, -1,
                                                     custom_lock.c_str(), 0, &uretprobe));
  std::vector<int> perf_fds;
  for (long cpu = 0; cpu < sysconf(_SC_NPROCESSORS_ONLN); ++cpu) {
    int fd = openCpuClock(static_cast<int>(cpu));
    ASSERT_GE(fd, 0) << "perf_event_open cpu-clock on cpu " << cpu;
    perf_fds.push_back(fd);
    links.emplace_back(bpf_program__attach_perf_event(skel->progs.cpu_sample, fd));
  }
  for (const auto& link : links) ASSERT_TRUE(link) << "attach";

  ASSERT_EQ(std::system((workloads + "/lock_story --threads 4 --iterations 3000 --burn-every 0 "
                                     "--hogs 0 >/dev/null")
                            .c_str()),
            0);
  ASSERT_EQ(std::system((custom_lock + " --threads 4 >/dev/null").c_str()), 0);
  ASSERT_EQ(std::system((workloads + "/cpu_shares --threads 2 --seconds 1 >/dev/null").c_str()), 0);
  links.clear();
  for (int fd : perf_fds) close(fd);

  const auto& bss = *skel->bss;
  uint64_t checked = bss.checked, differ = bss.differ, deep = bss.walks[1], pending = bss.pending;
  auto perWalk = [](uint64_t ns, uint64_t walks) { return walks ? double(ns) / walks : 0.0; };
  std::printf(
      "user walks compared: %llu (%llu with a uretprobe pending), different: %llu; ns per walk, "
      "walk_user_stack vs "
      "bpf_get_stack: %llu walks of <= 3 frames %.0f vs %.0f, %llu deeper %.0f vs %.0f\n",
      static_cast<unsigned long long>(checked), static_cast<unsigned long long>(pending),
      static_cast<unsigned long long>(differ), static_cast<unsigned long long>(bss.walks[0]),
      perWalk(bss.ours_ns[0], bss.walks[0]), perWalk(bss.kernels_ns[0], bss.walks[0]),
      static_cast<unsigned long long>(bss.walks[1]), perWalk(bss.ours_ns[1], bss.walks[1]),
      perWalk(bss.kernels_ns[1], bss.walks[1]));
  EXPECT_GT(checked, 1000u);
  EXPECT_GT(deep, 0u) << "no stack deeper than 3 frames was compared";
  EXPECT_GT(pending, 100u) << "too few walks inside a probed my_spin_acquire call";
  EXPECT_EQ(differ, 0u) << differ << " of " << checked << " walks differ";
}

}  // namespace
}  // namespace incise::testing
