// -o on hostile ground: a planted symlink (dangling or not), a file of the
// system's, a good trace and a command that cannot run, two recorders on
// one name, a FIFO with and without a reader. Nothing the recorder did not
// create is followed, truncated or chmod'ed, nothing is lost, nothing hangs.
#include "recorder/output_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "tests/hardening/child_process.h"
#include "tests/hardening/trace_check.h"
#include "tests/recorder/recorder_test_support.h"

namespace incise::testing {
namespace {

namespace fs = std::filesystem;
using recorder::OutputFile;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void spit(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

mode_t modeOf(const fs::path& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

fs::path scratchDir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("incise-output-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

void writeAll(int fd, const std::string& bytes) {
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
}

// OutputFile itself, with the unnamed O_TMPFILE and with the named temporary.
class OutputFileTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { dir_ = scratchDir(GetParam() ? "anonymous" : "named"); }
  void TearDown() override { fs::remove_all(dir_); }
  Result<OutputFile> create(const fs::path& path) {
    return OutputFile::create(path.string(), {.anonymous = GetParam()});
  }
  fs::path dir_;
};

TEST_P(OutputFileTest, ASymlinkIsRefusedAndWhatItPointsAtIsUntouched) {
  fs::path victim = dir_ / "victim";
  spit(victim, "precious");
  ASSERT_EQ(chmod(victim.c_str(), 0644), 0);
  fs::create_symlink(victim, dir_ / "planted.trace");
  Result<OutputFile> out = create(dir_ / "planted.trace");
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message().find("is a symbolic link (to " + victim.string() + ")"),
            std::string::npos)
      << out.error().message();
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_EQ(modeOf(victim), 0644u);
  // Dangling: nothing appears where it points.
  fs::create_symlink(dir_ / "nowhere", dir_ / "dangling.trace");
  EXPECT_FALSE(create(dir_ / "dangling.trace"));
  EXPECT_FALSE(fs::exists(dir_ / "nowhere"));
  EXPECT_EQ(listing(dir_), (std::vector<std::string>{"dangling.trace", "planted.trace", "victim"}));
}

TEST_P(OutputFileTest, AnExistingFileStaysUntilPublishAndIsReplacedNotTruncated) {
  fs::path path = dir_ / "good.trace";
  spit(path, "the good trace");
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  fs::create_hard_link(path, dir_ / "second-name");  // sees the old inode's bytes
  {
    Result<OutputFile> out = create(path);
    ASSERT_TRUE(out) << out.error().message();
    writeAll(out->takeWriterFd(), "a failed start");
    EXPECT_EQ(slurp(path), "the good trace");
    // Destroyed unpublished: discarded.
  }
  EXPECT_EQ(slurp(path), "the good trace");
  EXPECT_EQ(listing(dir_), (std::vector<std::string>{"good.trace", "second-name"}));

  Result<OutputFile> out = create(path);
  ASSERT_TRUE(out) << out.error().message();
  writeAll(out->takeWriterFd(), "the new trace");
  ASSERT_TRUE(out->publish());
  EXPECT_EQ(slurp(path), "the new trace");
  EXPECT_EQ(modeOf(path), 0600u);
  EXPECT_EQ(slurp(dir_ / "second-name"), "the good trace");  // replaced, never truncated
  EXPECT_EQ(modeOf(dir_ / "second-name"), 0644u);            // and never chmod'ed
  EXPECT_EQ(listing(dir_), (std::vector<std::string>{"good.trace", "second-name"}));
}

TEST_P(OutputFileTest, ANewFileIsPrivateWhateverTheUmask) {
  for (mode_t mask : {mode_t{0}, mode_t{022}, mode_t{0277}}) {
    fs::path path = dir_ / ("new-" + std::to_string(mask));
    mode_t old = umask(mask);
    Result<OutputFile> out = create(path);
    umask(old);
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_FALSE(fs::exists(path)) << "visible before it was published";
    ASSERT_TRUE(out->publish());
    EXPECT_EQ(modeOf(path), 0600u) << "umask " << mask;
  }
}

TEST_P(OutputFileTest, ANameAnotherRecorderHoldsIsRefused) {
  fs::path path = dir_ / "shared.trace";
  Result<OutputFile> first = create(path);
  ASSERT_TRUE(first);
  Result<OutputFile> racing = create(path);  // started before the first published
  ASSERT_TRUE(racing);
  writeAll(first->takeWriterFd(), "first");
  ASSERT_TRUE(first->publish());
  Result<OutputFile> later = create(path);
  ASSERT_FALSE(later);
  EXPECT_NE(later.error().message().find("another incise-record is writing it"), std::string::npos);
  writeAll(racing->takeWriterFd(), "second");
  Status taken = racing->publish();
  ASSERT_FALSE(taken);
  EXPECT_NE(taken.error().message().find("another incise-record is writing it"), std::string::npos);
  EXPECT_EQ(slurp(path), "first");
}

TEST_P(OutputFileTest, DirectoriesAndDevicesAreRefusedByName) {
  Result<OutputFile> dir = create(dir_);
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message().find("a directory"), std::string::npos) << dir.error().message();
  Result<OutputFile> tty = create("/dev/tty");
  ASSERT_FALSE(tty);
  EXPECT_NE(tty.error().message().find("character device"), std::string::npos);
  Result<OutputFile> null = create("/dev/null");
  ASSERT_TRUE(null) << null.error().message();
  EXPECT_TRUE(null->isStream());
  Result<OutputFile> missing_dir = create(dir_ / "no-such-dir" / "x.trace");
  ASSERT_FALSE(missing_dir);
  EXPECT_NE(missing_dir.error().message().find("No such file or directory"), std::string::npos);
}

TEST_P(OutputFileTest, AFifoWithoutAReaderFailsAtOnceAndWithOneIsAStream) {
  fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Result<OutputFile> alone = create(fifo);
  ASSERT_FALSE(alone);
  EXPECT_NE(alone.error().message().find("a FIFO that no process is reading"), std::string::npos);
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  Result<OutputFile> out = create(fifo);
  ASSERT_TRUE(out) << out.error().message();
  EXPECT_TRUE(out->isStream());
  EXPECT_TRUE(out->published());
  writeAll(out->takeWriterFd(), "streamed");
  char buffer[16] = {};
  EXPECT_EQ(read(reader, buffer, sizeof buffer), 8);
  close(reader);
}

INSTANTIATE_TEST_SUITE_P(TmpfileAndNamed, OutputFileTest, ::testing::Bool());

TEST(OutputFileTest, ProcFilesAreNeverTouched) {
  struct stat before {};
  ASSERT_EQ(stat("/proc/version", &before), 0);
  Result<OutputFile> out = OutputFile::create("/proc/version");
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message().find("cannot write /proc/version"), std::string::npos)
      << out.error().message();
  struct stat after {};
  ASSERT_EQ(stat("/proc/version", &after), 0);
  EXPECT_EQ(after.st_mode, before.st_mode);
}

// ---- the recorder on the same ground ----------------------------------------

struct Recorded {
  int exit_code = -1;
  std::string errors;
};

Recorded record(const std::vector<std::string>& args, std::chrono::seconds deadline) {
  std::vector<std::string> argv = {INCISE_RECORD_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess recorder = ChildProcess::start(argv);
  std::optional<int> status = recorder.waitFor(deadline);
  return Recorded{status ? *status : -1, recorder.errors()};
}

TEST(RecorderOutput, ProcVersionIsLeftAsItWas) {
  INCISE_REQUIRE_RECORDING();
  Recorded run = record({"-o", "/proc/version", "--", "/bin/true"}, std::chrono::seconds(60));
  EXPECT_EQ(run.exit_code, 1) << run.errors;
  EXPECT_NE(run.errors.find("cannot write /proc/version"), std::string::npos) << run.errors;
  EXPECT_EQ(modeOf("/proc/version"), 0444u);
}

TEST(RecorderOutput, ACommandThatCannotRunLeavesTheGoodTraceAlone) {
  INCISE_REQUIRE_RECORDING();
  fs::path dir = scratchDir("typo");
  fs::path good = dir / "good.trace";
  spit(good, "a good trace from yesterday");
  Recorded run = record({"-o", good.string(), "--", "/no/such/typo"}, std::chrono::seconds(120));
  EXPECT_EQ(run.exit_code, 1) << run.errors;
  EXPECT_NE(run.errors.find("cannot run /no/such/typo: No such file or directory"),
            std::string::npos)
      << run.errors;
  EXPECT_NE(run.errors.find("nothing was written to " + good.string()), std::string::npos);
  EXPECT_EQ(slurp(good), "a good trace from yesterday");
  EXPECT_EQ(listing(dir), std::vector<std::string>{"good.trace"});
  fs::remove_all(dir);
}

TEST(RecorderOutput, ADanglingSymlinkIsRefusedAndNothingAppearsWhereItPoints) {
  INCISE_REQUIRE_RECORDING();
  fs::path dir = scratchDir("dangling");
  fs::create_symlink(dir / "target", dir / "link.trace");
  Recorded run =
      record({"-a", "-d", "1", "-o", (dir / "link.trace").string()}, std::chrono::seconds(60));
  EXPECT_EQ(run.exit_code, 1) << run.errors;
  EXPECT_NE(run.errors.find("is a symbolic link"), std::string::npos) << run.errors;
  EXPECT_FALSE(fs::exists(dir / "target"));
  fs::remove_all(dir);
}

TEST(RecorderOutput, TwoRecordersOnOneNameCannotBothWinAndTheFirstIsKept) {
  INCISE_REQUIRE_RECORDING();
  fs::path dir = scratchDir("two");
  fs::path path = dir / "shared.trace";
  ChildProcess first =
      ChildProcess::start({INCISE_RECORD_BIN, "-a", "-F", "99", "-d", "8", "-o", path.string()});
  // The first recorder puts its trace in place once it records.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(path) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(path)) << first.errors();
  Recorded second = record({"-a", "-d", "1", "-o", path.string()}, std::chrono::seconds(120));
  EXPECT_EQ(second.exit_code, 1) << second.errors;
  EXPECT_NE(second.errors.find("another incise-record is writing it"), std::string::npos)
      << second.errors;
  ASSERT_EQ(first.waitFor(std::chrono::seconds(120)), 0) << first.errors();
  TraceCheck check = checkTrace(path.string());
  ASSERT_TRUE(check.problem.empty()) << check.problem;
  EXPECT_TRUE(check.used_footer);
  EXPECT_GT(check.rows[format::EventKind::kCpuSample], 0u);
  EXPECT_EQ(listing(dir), std::vector<std::string>{"shared.trace"});
  fs::remove_all(dir);
}

TEST(RecorderOutput, AFifoWithoutAReaderFailsWithoutHanging) {
  INCISE_REQUIRE_RECORDING();
  fs::path dir = scratchDir("fifo-alone");
  ASSERT_EQ(mkfifo((dir / "pipe").c_str(), 0600), 0);
  Recorded run = record({"-a", "-d", "1", "-o", (dir / "pipe").string()}, std::chrono::seconds(60));
  EXPECT_EQ(run.exit_code, 1) << run.errors;
  EXPECT_NE(run.errors.find("a FIFO that no process is reading"), std::string::npos) << run.errors;
  fs::remove_all(dir);
}

TEST(RecorderOutput, AFifoWithAReaderCarriesAWholeTrace) {
  INCISE_REQUIRE_RECORDING();
  fs::path dir = scratchDir("fifo");
  fs::path fifo = dir / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Open first (a reader is there), read only once data comes: poll on a
  // FIFO's read end waits for a writer's data, or its close.
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ChildProcess recorder =
      ChildProcess::start({INCISE_RECORD_BIN, "-a", "-F", "99", "-d", "2", "-o", fifo.string()});
  std::string stream;
  char buffer[65536];
  for (bool done = false; !done;) {
    pollfd p{reader, POLLIN, 0};
    ASSERT_GT(poll(&p, 1, 120'000), 0) << "no data and no end from the recorder";
    ssize_t n = read(reader, buffer, sizeof buffer);
    if (n > 0) stream.append(buffer, static_cast<size_t>(n));
    done = n == 0 || (n < 0 && errno != EAGAIN);
  }
  close(reader);
  ASSERT_EQ(recorder.waitFor(std::chrono::seconds(60)), 0) << recorder.errors();
  fs::path copy = dir / "copy.trace";
  spit(copy, stream);
  TraceCheck check = checkTrace(copy.string());
  ASSERT_TRUE(check.problem.empty()) << check.problem;
  EXPECT_TRUE(check.used_footer) << "the streamed trace ends in a footer";
  EXPECT_GT(check.rows[format::EventKind::kCpuSample], 0u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace incise::testing
