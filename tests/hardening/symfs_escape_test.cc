// A hostile trace cannot make the analyzer open files outside --symfs and
// the debug directories: mapping paths and debuglinks with "..", and
// absolute paths of a file planted outside, are refused (counted) and never
// opened (inotify sees no open), while the same file inside --symfs is used.
// Nor can a hostile sysroot: symlinks inside --symfs or a debug dir that lead
// out of it (absolute, relative, a linked folder, a /proc magic link) are not
// followed, with openat2 and with the realpath fallback; links that stay
// inside are.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/symbolize/debug_file_finder.h"
#include "analyzer/symbolize/symbolizer.h"
#include "base/hex.h"
#include "objfile/elf_reader.h"

namespace incise::analyzer {
namespace {

namespace fs = std::filesystem;

// A tiny static ELF with build-id whose function `helper` is at 0x40010c
// (the fuzz seed corpus holds it).
const fs::path kPlantedElf = INCISE_SOURCE_DIR "/fuzz/corpus/elf_image/static-buildid";
constexpr uint64_t kHelper = 0x40010c;

class InotifyOpens {
 public:
  explicit InotifyOpens(const fs::path& dir) : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    inotify_add_watch(fd_, dir.c_str(), IN_OPEN | IN_ACCESS);
  }
  ~InotifyOpens() { close(fd_); }
  // Events since the last call.
  size_t take() {
    alignas(inotify_event) char buffer[4096];
    size_t events = 0;
    ssize_t n;
    while ((n = read(fd_, buffer, sizeof buffer)) > 0) {
      for (char* p = buffer; p < buffer + n;) {
        auto* event = reinterpret_cast<inotify_event*>(p);
        ++events;
        p += sizeof(inotify_event) + event->len;
      }
    }
    return events;
  }

 private:
  int fd_;
};

format::Mapping mappingOf(uint32_t pid, const std::string& path) {
  return format::Mapping{pid, 0x400000, 0x401000, 0, path, "", 5, 0};
}

TEST(SymfsEscape, HostilePathsAreRefusedAndNeverOpened) {
  fs::path root = fs::temp_directory_path() / ("incise-symfs-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "sysroot/lib");
  fs::create_directories(root / "outside");
  fs::copy_file(kPlantedElf, root / "outside/secret.so");
  fs::copy_file(kPlantedElf, root / "sysroot/lib/inside.so");

  format::Metadata metadata;
  const std::vector<std::string> hostile = {
      "../outside/secret.so",                 // relative
      "/../outside/secret.so",                // climbs out of the symfs root
      "/lib/../../outside/secret.so",         // climbs out through a real folder
      "/lib/./../../../outside/secret.so",    //
      (root / "outside/secret.so").string(),  // absolute: re-rooted under --symfs, absent there
  };
  uint32_t pid = 1;
  for (const auto& path : hostile) metadata.mappings.push_back(mappingOf(pid++, path));
  // An embedded object whose debuglink climbs out.
  format::ObjectSymbols linked;
  linked.path = "/lib/linked.so";
  linked.debug_link = "../../outside/secret.so";
  linked.segments = {{0x400000, 0, 0x1000, 0x1000, 5}};
  metadata.objects.push_back(linked);
  metadata.mappings.push_back(mappingOf(pid++, linked.path));
  const uint32_t hostile_pids = pid;
  metadata.mappings.push_back(mappingOf(pid, "/lib/inside.so"));  // the positive control

  SymbolizerOptions options;
  options.symfs = (root / "sysroot").string();
  options.debug_dirs = {(root / "debug").string()};
  options.system_debug_dir.clear();
  options.use_debuginfod = false;

  InotifyOpens outside(root / "outside");
  InotifyOpens inside(root / "sysroot/lib");
  Symbolizer symbolizer(metadata, options);
  for (uint32_t p = 1; p < hostile_pids; ++p) {
    EXPECT_FALSE(symbolizer.lookup(p, kHelper, 0).known())
        << "pid " << p << " read the planted file";
  }
  EXPECT_EQ(outside.take(), 0u) << "a file outside --symfs was opened";
  EXPECT_GE(symbolizer.counters().refused_paths, 4u);

  // The same file inside --symfs is found, and inotify does see that open.
  EXPECT_EQ(symbolizer.lookup(hostile_pids, kHelper, 0).function, "helper");
  EXPECT_GT(inside.take(), 0u);
  EXPECT_EQ(outside.take(), 0u);
  fs::remove_all(root);
}

// A sysroot and a debug dir, each with links out of it and links within it.
class SymlinkedSysroot : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("incise-symlinks-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "sysroot/lib");
    fs::create_directories(root_ / "outside");
    fs::copy_file(kPlantedElf, root_ / "outside/secret.so");
    fs::copy_file(kPlantedElf, root_ / "sysroot/lib/inside.so");
    const fs::path lib = root_ / "sysroot/lib";
    fs::create_symlink(root_ / "outside/secret.so", lib / "absolute-out.so");
    fs::create_symlink("../../outside/secret.so", lib / "relative-out.so");
    fs::create_symlink(root_ / "outside", root_ / "sysroot/linked-dir");
    fs::create_symlink("/proc/self/root" + (root_ / "outside/secret.so").string(),
                       lib / "magic-out.so");
    fs::create_symlink("inside.so", lib / "inside-link.so");
    fs::create_symlink("../lib/./inside.so", lib / "inside-dotdot.so");

    Result<std::string> build_id = objfile::readBuildId(kPlantedElf);
    ASSERT_TRUE(build_id) << build_id.error().message();
    build_id_ = *build_id;
    const std::string hex = hexBytes(build_id_);
    const fs::path by_id = root_ / "debug/.build-id" / hex.substr(0, 2);
    fs::create_directories(by_id);
    fs::create_symlink(root_ / "outside/secret.so", by_id / (hex.substr(2) + ".debug"));
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
  std::string build_id_;
};

TEST_F(SymlinkedSysroot, OpenBeneathRefusesLinksOutWithEitherMethod) {
  const std::string sysroot = (root_ / "sysroot").string();
  for (auto method : {DebugFileFinder::Beneath::kOpenat2, DebugFileFinder::Beneath::kRealpath}) {
    SCOPED_TRACE(method == DebugFileFinder::Beneath::kOpenat2 ? "openat2" : "realpath");
    for (const char* out : {"/lib/absolute-out.so", "/lib/relative-out.so", "/linked-dir/secret.so",
                            "/lib/magic-out.so"}) {
      DebugFileFinder::BeneathFile file = DebugFileFinder::openBeneath(sysroot, out, method);
      EXPECT_FALSE(file.fd) << out << " was opened";
      EXPECT_TRUE(file.escaped) << out;
    }
    for (const char* in : {"/lib/inside.so", "/lib/inside-link.so", "/lib/inside-dotdot.so"}) {
      DebugFileFinder::BeneathFile file = DebugFileFinder::openBeneath(sysroot, in, method);
      EXPECT_TRUE(file.fd) << in << " was not opened";
      EXPECT_FALSE(file.escaped) << in;
    }
    DebugFileFinder::BeneathFile absent =
        DebugFileFinder::openBeneath(sysroot, "/lib/absent.so", method);
    EXPECT_FALSE(absent.fd);
    EXPECT_FALSE(absent.escaped);
  }
}

TEST_F(SymlinkedSysroot, SymbolizerNeverOpensThroughALinkOut) {
  format::Metadata metadata;
  uint32_t pid = 1;
  for (const char* path : {"/lib/absolute-out.so", "/lib/relative-out.so", "/linked-dir/secret.so",
                           "/lib/magic-out.so"}) {
    // No build-id in the mapping: only the symfs path can name the file.
    metadata.mappings.push_back(mappingOf(pid++, path));
  }
  // With the build-id, the debug dir's .build-id link (out) is tried first.
  format::Mapping by_id = mappingOf(pid++, "/lib/absent.so");
  by_id.build_id = build_id_;
  metadata.mappings.push_back(by_id);
  const uint32_t hostile_pids = pid;
  metadata.mappings.push_back(mappingOf(pid, "/lib/inside-link.so"));  // the positive control

  SymbolizerOptions options;
  options.symfs = (root_ / "sysroot").string();
  options.debug_dirs = {(root_ / "debug").string()};
  options.system_debug_dir.clear();
  options.use_debuginfod = false;

  InotifyOpens outside(root_ / "outside");
  Symbolizer symbolizer(metadata, options);
  for (uint32_t p = 1; p < hostile_pids; ++p) {
    EXPECT_FALSE(symbolizer.lookup(p, kHelper, 0).known())
        << "pid " << p << " read the planted file through a link";
  }
  EXPECT_EQ(outside.take(), 0u) << "a file outside --symfs was opened through a symlink";
  EXPECT_GE(symbolizer.counters().refused_paths, 5u);
  EXPECT_EQ(symbolizer.lookup(hostile_pids, kHelper, 0).function, "helper");
  EXPECT_EQ(outside.take(), 0u);
}

}  // namespace
}  // namespace incise::analyzer
