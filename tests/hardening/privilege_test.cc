// Privilege: the recorder gives up the capabilities it no longer needs once
// its programs are attached, and its trace files are private whatever the
// umask.
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "tests/hardening/child_process.h"
#include "tests/hardening/trace_check.h"
#include "tests/recorder/recorder_test_support.h"

namespace incise::testing {
namespace {

constexpr uint64_t bit(int capability) {
  return uint64_t{1} << capability;
}
constexpr int kCapPerfmon = 38;
constexpr int kCapBpf = 39;

TEST(Privilege, RecorderDropsCapabilitiesAfterAttachAndWritesMode0600) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("privilege.trace");
  std::optional<uint64_t> mine = effectiveCapabilities(getpid());
  ASSERT_TRUE(mine.has_value());
  ASSERT_TRUE(*mine & bit(CAP_SYS_ADMIN)) << "the test itself needs to be root";

  mode_t old_umask = umask(0);  // a careless umask must not make the trace readable
  ChildProcess recorder =
      ChildProcess::start({INCISE_RECORD_BIN, "-F", "99", "-a", "-d", "4", "-o", path});
  umask(old_umask);
  ASSERT_GT(recorder.pid(), 0);
  // Loading and attaching takes well under 2.5 s here; then the loop runs.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  std::optional<uint64_t> recording = effectiveCapabilities(recorder.pid());
  ASSERT_EQ(recorder.waitFor(std::chrono::seconds(20)), 0) << recorder.errors();
  ASSERT_TRUE(recording.has_value());

  EXPECT_EQ(*recording & ~*mine, 0u) << "no capability was gained";
  EXPECT_LT(__builtin_popcountll(*recording), __builtin_popcountll(*mine))
      << std::hex << "CapEff while recording " << *recording << ", before " << *mine;
  for (int dropped : {CAP_SYS_ADMIN, kCapBpf, kCapPerfmon, CAP_SETUID, CAP_NET_ADMIN,
                      CAP_DAC_OVERRIDE, CAP_SYS_MODULE}) {
    EXPECT_FALSE(*recording & bit(dropped)) << "capability " << dropped << " still effective";
  }

  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  // What the recorder still does after the drop works: samples, /proc reads
  // and kernel symbols (read from /proc/kallsyms at the end).
  TraceCheck check = checkTrace(path);
  ASSERT_TRUE(check.problem.empty()) << check.problem;
  EXPECT_GT(check.rows[format::EventKind::kCpuSample], 0u);
  TraceView trace(path);
  ASSERT_TRUE(trace.ok());
  EXPECT_FALSE(trace.reader().metadata().kernel_symbols.empty());
  EXPECT_FALSE(trace.reader().metadata().mappings.empty());
}

}  // namespace
}  // namespace incise::testing
