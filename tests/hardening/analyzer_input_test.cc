// The analyzer on hostile input: numbers out of range, damaged and
// truncated traces, a terminal on stdout, an archive under any umask. Each
// ends in a clear error (the problem named, a non-zero exit) or a correct
// result that says what it is missing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "format/reader.h"
#include "fuzz/fuzz_entries.h"
#include "tests/analyzer/reports/trace_builder.h"
#include "tests/hardening/run_incise.h"

namespace incise::testing {
namespace {

namespace fs = std::filesystem;
using analyzer::testing::TraceBuilder;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

fs::path scratchDir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("incise-hostile-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A trace of many small chunks (so a cut or a damaged block leaves most of it).
std::string writeManyChunks(TraceBuilder& b) {
  b.process(TraceBuilder::kPid, "app");
  b.thread(101, "worker");
  uint64_t hot = b.stack({"leaf", "mid", "main"});
  uint64_t cold = b.stack({"other", "main"});
  for (uint64_t t = 0; t < 2000; ++t) b.sample(1000 + t * 1000, 101, t % 3 ? hot : cold);
  b.setRowsPerChunk(100);
  auto path = b.write();
  return path ? *path : "";
}

uint64_t samplesIn(const std::string& path) {
  auto reader = format::Reader::open(path);
  return reader ? (*reader)->rows(format::EventKind::kCpuSample) : 0;
}

// ---- bounded numbers --------------------------------------------------------

TEST(AnalyzerNumbers, OutOfRangeValuesAreRefusedWithTheirBounds) {
  TraceBuilder b;
  std::string path = writeManyChunks(b);
  ASSERT_FALSE(path.empty());
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  } cases[] = {
      {{"top", path, "--limit", "-1"}, "--limit '-1': expected a whole number from 0 to"},
      {{"top", path, "--limit", "1e3"}, "--limit '1e3': expected a whole number"},
      {{"dump", path, "--limit", "-5"}, "--limit '-5': expected a whole number from 0 to"},
      {{"top", path, "--threads", "-1"}, "'-1': expected a whole number from 0 to 256"},
      {{"top", path, "--threads", "100000"}, "'100000': expected a whole number from 0 to 256"},
      {{"top", path, "--time", "0..1e12"},
       "END '1e12': expected a number from 0 to 1000000000 (seconds)"},
      {{"top", path, "--time", "nan..1"}, "START 'nan': expected a number"},
      {{"top", path, "--time", "-1..2"}, "START '-1': expected a number from 0"},
      {{"top", path, "--pid", "99999999999"}, "--pid '99999999999': expected a whole number"},
      {{"sched", path, "--limit", "18446744073709551616"}, "--limit '18446744073709551616'"},
      {{"diff", path, path, "--limit", "-2"}, "--limit '-2'"},
  };
  for (const Case& c : cases) {
    Outcome run = runIncise(c.args);
    std::string what = c.args[0] + " " + c.args[2] + " " + c.args[3];
    EXPECT_EQ(run.exit_code, 2) << what << "\n" << run.err;
    EXPECT_NE(run.err.find(c.expected), std::string::npos) << what << "\n" << run.err;
  }
  // In range, the same options work.
  EXPECT_EQ(
      runIncise({"top", path, "--limit", "0", "--threads", "2", "--time", "0..1e3"}).exit_code, 0);
}

// Boost.Program_options would loop forever formatting its message for these
// words (each placeholder it replaces brings itself back); they are refused
// before it sees them, with the word named, from every parser of the analyzer.
TEST(AnalyzerOptionWords, PlaceholdersInAnOptionWordAreRefusedNotLoopedOn) {
  TraceBuilder b;
  std::string path = writeManyChunks(b);
  ASSERT_FALSE(path.empty());
  fs::path dir = scratchDir("words");
  for (const std::string word :
       {"--%canonical_option%", "-%canonical_option%", "--%original_token%",
        "--x=%canonical_option%", "--json=%canonical_option%"}) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"top", path, word}, {"archive", "ls", dir.string(), word}}) {
      Outcome run = runIncise(args);
      EXPECT_EQ(run.exit_code, 2) << args[0] << " " << word << "\n" << run.err;
      EXPECT_NE(run.err.find("'" + word + "' is not an option"), std::string::npos)
          << args[0] << " " << word << "\n"
          << run.err;
    }
  }
  // After "--" a word is an operand, and an operand may hold '%'.
  fs::path percent = dir / "cpu%canonical_option%.trace";
  fs::copy_file(path, percent);
  Outcome operand = runIncise({"top", "--", percent.string()});
  EXPECT_EQ(operand.exit_code, 0) << operand.err;
  fs::remove_all(dir);
}

TEST(AnalyzerNumbers, SelectorAgesAreBounded) {
  fs::path dir = scratchDir("ages");
  TraceBuilder b;
  std::string path = writeManyChunks(b);
  ASSERT_EQ(runIncise({"archive", "add", dir.string(), path}).exit_code, 0);
  Outcome huge = runIncise({"archive", "diff", dir.string(), "--base",
                            "before=99999999999999999999d", "--new", "latest"});
  EXPECT_EQ(huge.exit_code, 2) << huge.err;
  EXPECT_NE(huge.err.find("before= '99999999999999999999': expected a whole number from 0 to "
                          "36500 (days)"),
            std::string::npos)
      << huge.err;
  fs::remove_all(dir);
}

// ---- archive permissions ----------------------------------------------------

TEST(ArchivePermissions, TracesAndIndexStayPrivateUnderAnyUmask) {
  TraceBuilder b;
  std::string path = writeManyChunks(b);
  ASSERT_FALSE(path.empty());
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  for (mode_t mask : {mode_t{077}, mode_t{022}, mode_t{0}}) {
    fs::path root = scratchDir("archive-" + std::to_string(mask));
    fs::path dir = root / "traces";
    mode_t old = umask(mask);
    Outcome run = runIncise({"archive", "add", dir.string(), path});
    umask(old);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    struct stat st {};
    ASSERT_EQ(stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u) << "umask " << mask;
    size_t files = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
      ASSERT_EQ(stat(entry.path().c_str(), &st), 0);
      EXPECT_EQ(st.st_mode & 07777, 0600u) << entry.path() << " under umask " << mask;
      ++files;
    }
    EXPECT_GE(files, 3u);  // the trace, index.json and .lock
    fs::remove_all(root);
  }
}

// ---- a damaged header -------------------------------------------------------

class DamagedHeader : public ::testing::Test {
 protected:
  void SetUp() override {
    original_ = writeManyChunks(builder_);
    ASSERT_FALSE(original_.empty());
    bytes_ = slurp(original_);
    auto reader = format::Reader::open(original_);
    ASSERT_TRUE(reader);
    samples_ = (*reader)->rows(format::EventKind::kCpuSample);
    blocks_ = (*reader)->blocks().size();
    ASSERT_GT(blocks_, 10u);
    damaged_ = original_ + ".damaged";
  }
  void TearDown() override { fs::remove(damaged_); }

  // One bit of the header block's payload (past the magic and block header).
  std::string flipHeaderBit() const {
    std::string bytes = bytes_;
    bytes[8 + 24 + 5] = static_cast<char>(bytes[8 + 24 + 5] ^ 0x10);
    return bytes;
  }

  TraceBuilder builder_;
  std::string original_, damaged_, bytes_;
  uint64_t samples_ = 0;
  size_t blocks_ = 0;
};

TEST_F(DamagedHeader, OneFlippedBitLeavesEveryOtherBlockReadable) {
  spit(damaged_, flipHeaderBit());
  auto reader = format::Reader::open(damaged_);
  ASSERT_TRUE(reader) << reader.error().message();
  const format::RecoveryReport& report = (*reader)->recovery();
  EXPECT_TRUE(report.header_lost);
  EXPECT_FALSE(report.clean());
  ASSERT_FALSE(report.damage.empty());
  EXPECT_EQ(report.damage.front().offset, 8u);
  EXPECT_EQ((*reader)->rows(format::EventKind::kCpuSample), samples_);
  EXPECT_EQ((*reader)->blocks().size(), blocks_ - 1);  // all but the header
  EXPECT_EQ((*reader)->header().start_mono_ns, TraceBuilder::kStartNs + 1000);  // first sample

  Outcome check = runIncise({"check", damaged_});
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_NE(check.out.find("the trace header is damaged"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("DAMAGED"), std::string::npos) << check.out;
  Outcome top = runIncise({"top", damaged_});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.err.find("its header is lost"), std::string::npos) << top.err;
  EXPECT_NE(top.out.find("leaf"), std::string::npos) << top.out;
}

TEST_F(DamagedHeader, AndACutEndStillLeavesTheBlocksBetween) {
  std::string bytes = flipHeaderBit();
  bytes.resize(bytes.size() * 2 / 3);
  spit(damaged_, bytes);
  auto reader = format::Reader::open(damaged_);
  ASSERT_TRUE(reader) << reader.error().message();
  EXPECT_TRUE((*reader)->recovery().header_lost);
  EXPECT_FALSE((*reader)->recovery().used_footer);
  EXPECT_EQ((*reader)->recovery().damage.front().offset, 8u);
  uint64_t salvaged = (*reader)->rows(format::EventKind::kCpuSample);
  EXPECT_GT(salvaged, samples_ / 2);
  EXPECT_LT(salvaged, samples_);
}

TEST_F(DamagedHeader, AFlippedMagicBitIsDamageNotAnotherFile) {
  std::string bytes = bytes_;
  bytes[2] = static_cast<char>(bytes[2] ^ 0x01);
  spit(damaged_, bytes);
  auto reader = format::Reader::open(damaged_);
  ASSERT_TRUE(reader) << reader.error().message();
  EXPECT_FALSE((*reader)->recovery().clean());
  EXPECT_EQ((*reader)->rows(format::EventKind::kCpuSample), samples_);
  spit(damaged_, "not a trace at all, just some text in a file");
  EXPECT_FALSE(format::Reader::open(damaged_));
}

// ---- every command says what was salvaged ------------------------------------

TEST(SalvageWarnings, EveryCommandThatReadsACutTraceSaysSo) {
  TraceBuilder b;
  std::string path = writeManyChunks(b);
  ASSERT_FALSE(path.empty());
  std::string cut = path + ".cut";
  std::string bytes = slurp(path);
  spit(cut, bytes.substr(0, bytes.size() / 2));
  uint64_t all = samplesIn(path), salvaged = samplesIn(cut);
  ASSERT_GT(salvaged, 0u);
  ASSERT_LT(salvaged, all);
  fs::path dir = scratchDir("salvage");
  std::string out = (dir / "out").string();
  const std::vector<std::vector<std::string>> commands = {
      {"export", cut, "--format", "pprof", "-o", out},
      {"export", cut, "--format", "chrome", "-o", out},
      {"export", cut, "--format", "folded", "-o", out},
      {"export", cut, "--format", "speedscope", "-o", out},
      {"diff", path, cut},
      {"dump", cut},
      {"archive", "add", (dir / "archive").string(), cut},
      {"top", cut},
      {"flame", cut, "-o", out + ".html"},
      {"sched", cut},
      {"offcpu", cut},
      {"locks", cut},
      {"correlate", cut},
  };
  for (const auto& args : commands) {
    Outcome run = runIncise(args);
    EXPECT_EQ(run.exit_code, 0) << args[0] << " " << args[1] << "\n" << run.err;
    EXPECT_NE(run.err.find("is damaged (no trailer"), std::string::npos)
        << args[0] << " said nothing about the cut:\n"
        << run.err;
    EXPECT_NE(run.err.find("what follows may be incomplete"), std::string::npos) << run.err;
  }
  fs::remove_all(dir);
  fs::remove(cut);
}

// ---- check gives one verdict ------------------------------------------------

TEST(CheckVerdict, AChunkThatDoesNotDecodeIsNeverCalledClean) {
  TraceBuilder b;
  std::string path = writeManyChunks(b);
  ASSERT_FALSE(path.empty());
  std::string bytes = slurp(path);
  auto reader = format::Reader::open(path);
  ASSERT_TRUE(reader);
  // Garble the compressed columns of one event chunk, then make its
  // checksums agree: the index verifies, the chunk does not decode.
  const format::ChunkRef chunk = (*reader)->chunks(format::EventKind::kCpuSample).at(3);
  for (uint64_t i = chunk.offset + 24 + chunk.length / 2; i < chunk.offset + 24 + chunk.length; ++i)
    bytes[i] = static_cast<char>(bytes[i] ^ 0x5A);
  ASSERT_GT(fuzz::fixBlockChecksums(bytes), 0u);
  std::string garbled = path + ".garbled";
  spit(garbled, bytes);
  Outcome check = runIncise({"check", garbled});
  EXPECT_EQ(check.exit_code, 1) << check.out;
  EXPECT_EQ(check.out.find("clean"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("DAMAGED"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("damaged: block at offset " + std::to_string(chunk.offset)),
            std::string::npos)
      << check.out;
  Outcome clean = runIncise({"check", path});
  EXPECT_EQ(clean.exit_code, 0);
  EXPECT_NE(clean.out.find("integrity: clean"), std::string::npos) << clean.out;
  EXPECT_EQ(clean.out.find("DAMAGED"), std::string::npos) << clean.out;
  fs::remove(garbled);
}

// ---- binary output and a terminal -------------------------------------------

TEST(PprofToTerminal, IsRefusedInsteadOfWritingGzipToTheScreen) {
  TraceBuilder b;
  std::string path = writeManyChunks(b);
  ASSERT_FALSE(path.empty());
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  std::string slave = ptsname(master);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int tty = open(slave.c_str(), O_RDWR);
    if (tty < 0) _exit(120);
    dup2(tty, STDOUT_FILENO);
    dup2(tty, STDERR_FILENO);
    execl(INCISE_BIN, INCISE_BIN, "export", path.c_str(), "--format", "pprof", nullptr);
    _exit(121);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::string screen;
  char buffer[4096];
  fcntl(master, F_SETFL, O_NONBLOCK);
  for (ssize_t n; (n = read(master, buffer, sizeof buffer)) > 0;)
    screen.append(buffer, static_cast<size_t>(n));
  close(master);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2) << screen;
  EXPECT_NE(screen.find("pprof is gzipped binary: give -o FILE or redirect stdout"),
            std::string::npos)
      << screen;
  EXPECT_EQ(screen.find("\x1f\x8b"), std::string::npos) << "gzip bytes reached the terminal";
  // Redirected, the same command writes the profile.
  Outcome redirected = runIncise({"export", path, "--format", "pprof"});
  EXPECT_EQ(redirected.exit_code, 0) << redirected.err;
  EXPECT_EQ(redirected.out.substr(0, 2), "\x1f\x8b");
}

}  // namespace
}  // namespace incise::testing
