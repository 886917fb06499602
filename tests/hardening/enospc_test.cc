// A full disk: the recorder stops cleanly, says why, exits non-zero and
// leaves a file that opens and decodes.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include "tests/hardening/child_process.h"
#include "tests/hardening/trace_check.h"
#include "tests/recorder/recorder_test_support.h"

namespace incise::testing {
namespace {

// A tmpfs of `size` mounted on a fresh directory, unmounted on scope exit.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(const std::string& size) {
    dir_ = tempTracePath("small-tmpfs");
    std::filesystem::create_directories(dir_);
    mounted_ = mount("tmpfs", dir_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
    std::filesystem::remove(dir_);
  }
  bool mounted() const { return mounted_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
  bool mounted_ = false;
};

TEST(FullDisk, RecorderStopsWithTheReasonAndAReadableFile) {
  INCISE_REQUIRE_RECORDING();
  SmallTmpfs tmpfs("192k");
  ASSERT_TRUE(tmpfs.mounted()) << "mount -t tmpfs failed: " << std::strerror(errno);
  std::string path = tmpfs.path("full.trace");
  ChildProcess workload = ChildProcess::start(
      {INCISE_WORKLOADS_DIR "/cpu_shares", "--seconds", "60", "--threads", "2"});
  // Every CPU at 999 Hz with stacks and switches fills 192 KiB within the 40 s (0.35 MB in
  // 40 s on an idle 2-CPU box with small chunks merged; the first blocks must fit: metadata of
  // every process comes first).
  ChildProcess recorder =
      ChildProcess::start({INCISE_RECORD_BIN, "-F", "999", "-a", "-d", "40", "-o", path});
  std::optional<int> status = recorder.waitFor(std::chrono::seconds(60));
  ASSERT_TRUE(status.has_value()) << "the recorder hung on a full disk";
  EXPECT_NE(*status, 0) << recorder.errors();
  EXPECT_NE(recorder.errors().find("No space left on device"), std::string::npos)
      << recorder.errors();
  TraceCheck check = checkTrace(path);
  ASSERT_TRUE(check.problem.empty()) << check.problem;
  EXPECT_GT(check.rows[format::EventKind::kCpuSample], 0u);
}

}  // namespace
}  // namespace incise::testing
