// Where the Go mutex probes go (recorder/probes/go_mutex_probes.h): the RETs of a
// register-ABI Go function found from its prologue's frame size, on code
// bytes as Go 1.17-1.20 and 1.21+ lay frames out, and on the real lockSlow
// of the bundled Go workload when it was built; the goroutine id's offset
// from the workload's DWARF; the RWMutex and Cond wait functions of the
// bundled go_waits workload, and its RWMutex and Cond layouts.
#include "recorder/probes/go_mutex_probes.h"
#include "objfile/elf_reader.h"
#include "recorder/probes/go_goid_offset.h"
#include "recorder/probes/go_target_executables.h"
#include "recorder/probes/go_wait_probes.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace incise::recorder {
namespace {

// cmp 0x10(%r14),%rsp; jbe; sub $0x48,%rsp; mov %rbp,0x40(%rsp); lea ...
const std::vector<uint8_t> kGo119Prologue = {0x49, 0x3b, 0x66, 0x10, 0x0f, 0x86, 0x10, 0x00,
                                             0x00, 0x00, 0x48, 0x83, 0xec, 0x48, 0x48, 0x89,
                                             0x6c, 0x24, 0x40, 0x48, 0x8d, 0x6c, 0x24, 0x40};
// mov 0x40(%rsp),%rbp; add $0x48,%rsp; ret
const std::vector<uint8_t> kGo119Epilogue = {0x48, 0x8b, 0x6c, 0x24, 0x40,
                                             0x48, 0x83, 0xc4, 0x48, 0xc3};

std::vector<uint8_t> concat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

TEST(GoFunctionReturns, FindsEachReturnThatClosesTheFrame) {
  std::vector<uint8_t> body = {0x90, 0x90, 0x90};
  std::vector<uint8_t> code = concat({kGo119Prologue, body, kGo119Epilogue, body, kGo119Epilogue});
  Result<std::vector<uint64_t>> returns = goFunctionReturns(code);
  ASSERT_TRUE(returns) << returns.error().message();
  size_t first = kGo119Prologue.size() + body.size() + kGo119Epilogue.size() - 1;
  size_t second = first + body.size() + kGo119Epilogue.size();
  EXPECT_EQ(*returns, (std::vector<uint64_t>{first, second}));
  for (uint64_t ret : *returns) EXPECT_EQ(code[ret], 0xc3);
}

TEST(GoFunctionReturns, AnEpilogueOfAnotherFrameSizeIsNotOne) {
  // add $0x28,%rsp: another frame's size (bytes that only look alike).
  std::vector<uint8_t> other = {0x48, 0x8b, 0x6c, 0x24, 0x20, 0x48, 0x83, 0xc4, 0x28, 0xc3};
  Result<std::vector<uint64_t>> returns = goFunctionReturns(concat({kGo119Prologue, other}));
  EXPECT_FALSE(returns);
}

TEST(GoFunctionReturns, Go121FramesPushRbp) {
  // cmp 0x10(%r14),%rsp; jbe; push %rbp; mov %rsp,%rbp; sub $0x18,%rsp ...
  // add $0x18,%rsp; pop %rbp; ret
  std::vector<uint8_t> code = {0x49, 0x3b, 0x66, 0x10, 0x76, 0x20, 0x55, 0x48, 0x89, 0xe5, 0x48,
                               0x83, 0xec, 0x18, 0x90, 0x48, 0x83, 0xc4, 0x18, 0x5d, 0xc3};
  Result<std::vector<uint64_t>> returns = goFunctionReturns(code);
  ASSERT_TRUE(returns) << returns.error().message();
  EXPECT_EQ(*returns, (std::vector<uint64_t>{code.size() - 1}));
}

TEST(GoFunctionReturns, CodeWithoutTheRegisterAbiStackCheckIsRefused) {
  // Go 1.16's stack check reads g from %fs: mov %fs:0xfffffffffffffff8,%rcx
  std::vector<uint8_t> code =
      concat({{0x64, 0x48, 0x8b, 0x0c, 0x25, 0xf8, 0xff, 0xff, 0xff}, kGo119Epilogue});
  Result<std::vector<uint64_t>> returns = goFunctionReturns(code);
  ASSERT_FALSE(returns);
  EXPECT_NE(returns.error().message().find("register-ABI"), std::string::npos);
}

TEST(GoFunctionReturns, PaddingNopsBeforeTheReturnAreSkipped) {
  // mov 0x40(%rsp),%rbp; add $0x48,%rsp; nop; ret, as Go 1.19 pads
  // runtime.notifyListWait's first return.
  const std::vector<uint8_t> padded = {0x48, 0x8b, 0x6c, 0x24, 0x40, 0x48,
                                       0x83, 0xc4, 0x48, 0x90, 0xc3};
  std::vector<uint8_t> code = concat({kGo119Prologue, padded, kGo119Epilogue});
  Result<std::vector<uint64_t>> returns = goFunctionReturns(code);
  ASSERT_TRUE(returns) << returns.error().message();
  size_t first = kGo119Prologue.size() + padded.size() - 1;
  EXPECT_EQ(*returns, (std::vector<uint64_t>{first, first + kGo119Epilogue.size()}));
}

TEST(GoMutexProbes, ABinaryWithoutSyncMutexIsNotAnError) {
  Result<std::optional<GoMutexProbes>> probes = findGoMutexProbes("/proc/self/exe");
  ASSERT_TRUE(probes) << probes.error().message();
  EXPECT_FALSE(probes->has_value());
}

TEST(GoMutexProbes, TheGoWorkloadsLockSlowAndUnlockSlowHaveTheirReturnsFound) {
  const std::string binary = INCISE_WORKLOADS_DIR "/go_mutex";
  if (!std::filesystem::exists(binary)) GTEST_SKIP() << binary << " not built (no Go toolchain)";
  Result<std::optional<GoMutexProbes>> probes = findGoMutexProbes(binary);
  ASSERT_TRUE(probes) << probes.error().message();
  ASSERT_TRUE(probes->has_value());
  const GoMutexProbes& found = **probes;
  EXPECT_NE(found.lock_slow, found.unlock_slow);
  ASSERT_FALSE(found.lock_slow_returns.empty());
  ASSERT_FALSE(found.unlock_slow_returns.empty());
  FILE* file = std::fopen(binary.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  for (auto [entry, returns] : {std::pair{found.lock_slow, &found.lock_slow_returns},
                                std::pair{found.unlock_slow, &found.unlock_slow_returns}}) {
    for (uint64_t ret : *returns) {
      EXPECT_GT(ret, entry);
      ASSERT_EQ(std::fseek(file, static_cast<long>(ret), SEEK_SET), 0);
      EXPECT_EQ(std::fgetc(file), 0xc3) << "no RET at file offset " << ret;
    }
  }
  std::fclose(file);
}

TEST(GoroutineIdOffset, AProgramWithoutTheGoRuntimeHasNone) {
  Result<uint64_t> offset = goroutineIdOffset("/proc/self/exe");
  ASSERT_FALSE(offset);
  EXPECT_NE(offset.error().message().find("runtime.g"), std::string::npos)
      << offset.error().message();
}

TEST(GoroutineIdOffset, TheGoWorkloadsRuntimeNamesIt) {
  const std::string binary = INCISE_WORKLOADS_DIR "/go_mutex";
  if (!std::filesystem::exists(binary)) GTEST_SKIP() << binary << " not built (no Go toolchain)";
  Result<uint64_t> offset = goroutineIdOffset(binary);
  ASSERT_TRUE(offset) << offset.error().message();
  // goid follows the stack bounds, guards, panic and defer lists, the
  // scheduling context and more: past 100 bytes in every Go release, and
  // 8-aligned. GoMutexRecording checks the ids read there.
  EXPECT_GT(*offset, 100u);
  EXPECT_EQ(*offset % 8, 0u);
}

void expectReturnAt(const std::string& binary, uint64_t offset) {
  FILE* file = std::fopen(binary.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fseek(file, static_cast<long>(offset), SEEK_SET), 0);
  EXPECT_EQ(std::fgetc(file), 0xc3) << "no RET at file offset " << offset;
  std::fclose(file);
}

TEST(GoWaitProbes, ABinaryWithoutTheGoRuntimeHasNone) {
  Result<format::ObjectSymbols> object = objfile::readElfObject("/proc/self/exe");
  ASSERT_TRUE(object) << object.error().message();
  Result<std::optional<GoWaitProbes>> probes = findGoWaitProbes("/proc/self/exe", *object);
  ASSERT_TRUE(probes) << probes.error().message();
  EXPECT_FALSE(probes->has_value());
}

TEST(GoWaitProbes, TheGoWaitsWorkloadsSemaphoreAndNotifyListWaitsAreFound) {
  const std::string binary = INCISE_WORKLOADS_DIR "/go_waits";
  if (!std::filesystem::exists(binary)) GTEST_SKIP() << binary << " not built (no Go toolchain)";
  Result<format::ObjectSymbols> object = objfile::readElfObject(binary);
  ASSERT_TRUE(object) << object.error().message();
  Result<std::optional<GoWaitProbes>> probes = findGoWaitProbes(binary, *object);
  ASSERT_TRUE(probes) << probes.error().message();
  ASSERT_TRUE(probes->has_value());
  const GoWaitProbes& found = **probes;
  bool rwmutex = false, cond = false;
  for (const GoWaitFunction& wait : found.waits) {
    SCOPED_TRACE(wait.name);
    (wait.role == GO_WAIT_COND ? cond : rwmutex) = true;
    ASSERT_FALSE(wait.probe.returns.empty());
    for (uint64_t ret : wait.probe.returns) {
      EXPECT_GT(ret, wait.probe.entry);
      expectReturnAt(binary, ret);
    }
    // Before Go 1.20 the writer is told from readers by its caller.
    if (wait.role == GO_WAIT_BY_CALLER) {
      EXPECT_GT(found.writer_caller_size, 0u);
    }
  }
  EXPECT_TRUE(rwmutex);
  EXPECT_TRUE(cond);
  // Semrelease and notifyListNotifyAll (the workload broadcasts, never signals one).
  EXPECT_GE(found.wakes.size(), 2u);
}

TEST(GoSyncOffsets, TheGoWaitsWorkloadsDwarfPlacesTheSemaphoresAndTheNotifyList) {
  const std::string binary = INCISE_WORKLOADS_DIR "/go_waits";
  if (!std::filesystem::exists(binary)) GTEST_SKIP() << binary << " not built (no Go toolchain)";
  Result<GoSyncOffsets> offsets = goSyncOffsets(binary);
  ASSERT_TRUE(offsets) << offsets.error().message();
  // After the RWMutex's own Mutex (two 32-bit words): writerSem, then readerSem.
  ASSERT_TRUE(offsets->rw_writer_sem && offsets->rw_reader_sem);
  EXPECT_GE(*offsets->rw_writer_sem, 8u);
  EXPECT_EQ(*offsets->rw_reader_sem, *offsets->rw_writer_sem + 4);
  // After the Cond's Locker (an interface: two words).
  ASSERT_TRUE(offsets->cond_notify);
  EXPECT_GE(*offsets->cond_notify, 16u);
}

TEST(TargetExecutables, SystemWideNamesEachRunningExecutableOnceWithItsProcesses) {
  RecordConfig config;
  config.target_kind = TargetKind::kAll;
  std::vector<TargetExecutable> targets = targetExecutables(config);
  struct stat self {};
  ASSERT_EQ(stat("/proc/self/exe", &self), 0);
  std::set<std::pair<dev_t, ino_t>> files;
  size_t ours = 0;
  for (const TargetExecutable& target : targets) {
    struct stat info {};
    // A process may have exited since: its path no longer resolves.
    if (stat(target.path.c_str(), &info) != 0) continue;
    EXPECT_TRUE(files.insert({info.st_dev, info.st_ino}).second) << target.path;
    EXPECT_EQ(target.pid, -1) << target.path;
    EXPECT_FALSE(target.pids.empty()) << target.path;
    if (std::find(target.pids.begin(), target.pids.end(), uint32_t(getpid())) == target.pids.end())
      continue;
    ++ours;
    EXPECT_EQ(info.st_ino, self.st_ino) << target.path;
  }
  EXPECT_EQ(ours, 1u);
}

// A process that has exited: a child that ran and was reaped.
uint32_t exitedPid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return static_cast<uint32_t>(child);
}

TEST(TargetExecutables, ExitedOnlyWhenEveryProcessRunningItHasExited) {
  const uint32_t gone = exitedPid(), alive = static_cast<uint32_t>(getpid());
  const std::string path = "/proc/" + std::to_string(gone) + "/exe";
  EXPECT_TRUE(targetExited({.path = path, .pids = {gone}}));
  EXPECT_FALSE(targetExited({.path = path, .pids = {gone, alive}}));
  // `-- CMD`'s program: no process runs it yet, none has exited.
  EXPECT_FALSE(targetExited({.path = "/usr/bin/true"}));
}

}  // namespace
}  // namespace incise::recorder
