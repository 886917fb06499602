// Resolving --lock-probe symbols, finding libc in /proc/PID/maps, and
// the cpu lists the per-CPU sources open events on.
#include <gtest/gtest.h>
#include <unistd.h>

#include "recorder/libc_locator.h"
#include "recorder/lock_probe_spec.h"
#include "recorder/online_cpus.h"

// Real functions of this test binary for resolveLockProbe to find.
extern "C" __attribute__((noinline, used)) void incise_test_lock(void* lock) {
  asm volatile("" ::"r"(lock));
}
extern "C" __attribute__((noinline, used)) void incise_test_unlock(void* lock) {
  asm volatile("" ::"r"(lock) : "memory");
}

namespace incise::recorder {
namespace {

std::string selfPath() {
  char buffer[4096];
  ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

TEST(LockProbeSpec, ResolvesFunctionsOfARealBinary) {
  std::string self = selfPath();
  ASSERT_FALSE(self.empty());
  Result<ResolvedLockProbe> probe = resolveLockProbe({.binary = self,
                                                      .acquire_symbol = "incise_test_lock",
                                                      .release_symbol = "incise_test_unlock"});
  ASSERT_TRUE(probe) << probe.error().message();
  EXPECT_NE(probe->acquire_offset, 0u);
  EXPECT_NE(probe->acquire_offset, probe->release_offset);
}

TEST(LockProbeSpec, NamesTheMissingSymbolAndTheFile) {
  std::string self = selfPath();
  Result<ResolvedLockProbe> probe = resolveLockProbe(
      {.binary = self, .acquire_symbol = "no_such_lock", .release_symbol = "incise_test_unlock"});
  ASSERT_FALSE(probe);
  EXPECT_EQ(probe.error().message(), "--lock-probe: no symbol 'no_such_lock' in " + self);
}

TEST(LockProbeSpec, NamesAMissingBinary) {
  Result<ResolvedLockProbe> probe =
      resolveLockProbe({.binary = "/no/such/binary", .acquire_symbol = "a", .release_symbol = "b"});
  ASSERT_FALSE(probe);
  EXPECT_EQ(probe.error().message(), "--lock-probe: /no/such/binary: No such file or directory");
}

TEST(LibcLocator, FindsTheExecutableLibcMapping) {
  const char* maps =
      "55d0a000-55d0b000 r--p 00000000 08:01 123 /usr/bin/app\n"
      "7f00a000-7f00b000 r-xp 00000000 08:01 77 /usr/lib/x86_64-linux-gnu/libcap.so.2\n"
      "7f10a000-7f132000 r--p 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f132000-7f287000 r-xp 00028000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7ffd0000-7ffd1000 rw-p 00000000 00:00 0 [stack]\n";
  Result<std::string> libc = findLibcInMaps(maps);
  ASSERT_TRUE(libc) << libc.error().message();
  EXPECT_EQ(*libc, "/usr/lib/x86_64-linux-gnu/libc.so.6");
}

TEST(LibcLocator, SaysWhenThereIsNone) {
  Result<std::string> libc = findLibcInMaps("00400000-00401000 r-xp 00000000 08:01 5 /static\n");
  ASSERT_FALSE(libc);
  EXPECT_NE(libc.error().message().find("no libc"), std::string::npos);
}

TEST(LibcLocator, FindsOurOwnThroughProcRoot) {
  Result<std::string> libc = libcOfProcess(static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(libc) << libc.error().message();
  EXPECT_EQ(libc->rfind("/proc/" + std::to_string(getpid()) + "/root/", 0), 0u) << *libc;
  EXPECT_EQ(access(libc->c_str(), R_OK), 0) << *libc;
}

TEST(CpuList, ParsesRangesAndSingles) {
  Result<std::vector<int>> cpus = parseCpuList("0-2,5,7-8\n");
  ASSERT_TRUE(cpus) << cpus.error().message();
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 5, 7, 8}));
}

TEST(CpuList, RejectsGarbage) {
  for (const char* bad : {"", "\n", "a", "3-1", "1-", "-1", "1,,2", "0-99999999"})
    EXPECT_FALSE(parseCpuList(bad)) << bad;
}

}  // namespace
}  // namespace incise::recorder
