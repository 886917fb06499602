// The pprof export of a trace whose frames are in a real binary, compiled
// here, read back by the real `go tool pprof`: -top names the hot functions
// (from a debug file by build-id), -list prints their source lines, the
// main binary is the first mapping and appears once, and without the debug
// file pprof names the frames itself from the binary at the mapping's path.
// Samples of a Go program's goroutines carry the goroutine as a label
// (`-tags`).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>

#include "analyzer/export/gzip.h"
#include "analyzer/export/profile.pb.h"
#include "base/hex.h"
#include "format/writer.h"
#include "objfile/elf_reader.h"
#include "tests/analyzer/export/export_test_files.h"
#include "tests/analyzer/symbolize/loader_mappings.h"
#include "tests/objfile/elf_test_files.h"

namespace incise::analyzer {
namespace {

namespace pb = perftools::profiles;
using incise::testing::compileC;
using incise::testing::nmAddress;
using incise::testing::TempDir;

constexpr uint32_t kPid = 900;
constexpr uint64_t kBias = 0x55d4c3a00000;
constexpr uint64_t kStart = 1'000'000'000;

const char* kSource = R"(
__attribute__((noinline)) static int spin_here(int x) {
  int total = 0;
  for (int i = 0; i < x; ++i) total += i * 31;  /* the hot line */
  return total;
}
__attribute__((noinline)) static int spin_there(int x) { return spin_here(x) ^ 7; }
int main(int argc, char** argv) { (void)argv; return spin_there(argc) + spin_here(argc); }
)";

std::string shell(const std::string& command, int& status) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  char buffer[512];
  while (pipe && fgets(buffer, sizeof buffer, pipe)) output += buffer;
  status = pipe ? pclose(pipe) : -1;
  return output;
}

class PprofOfARealBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v go >/dev/null 2>&1") != 0) {
      if (const char* ci = std::getenv("CI"); ci && std::string(ci) == "true")
        FAIL() << "go is missing under CI=true (tools/setup installs golang-go)";
      GTEST_SKIP() << "go is not installed: `go tool pprof` checks skipped";
    }
    binary_ = compileC(dir_, "spinner", kSource, "-O0 -fPIE -pie");
    here_ = nmAddress(binary_, "spin_here");
    there_ = nmAddress(binary_, "spin_there");
    main_ = nmAddress(binary_, "main");
    ASSERT_NE(here_, 0u);
    // The debug directory holds the unstripped binary under its build-id;
    // the trace holds what a stripped copy embeds.
    Result<std::string> build_id = objfile::readBuildId(binary_);
    ASSERT_TRUE(build_id);
    const std::string hex = hexBytes(*build_id);
    const std::string debug_file =
        dir_.file("debug/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug");
    std::filesystem::create_directories(std::filesystem::path(debug_file).parent_path());
    std::filesystem::copy_file(binary_, debug_file);
    std::filesystem::copy_file(binary_, dir_.file("stripped"));
    ASSERT_TRUE(incise::testing::run("strip --strip-all " + dir_.file("stripped")));
    ASSERT_TRUE(writeTrace(dir_.file("stripped")));
  }

  // 30 samples in spin_here called from spin_there, 10 in spin_here from
  // main; of the deep ones, 20 ran goroutine 18 and 6 goroutine 19 (as a Go
  // program's would), the other 14 none.
  bool writeTrace(const std::string& stripped) {
    Result<format::ObjectSymbols> object = objfile::readElfObject(stripped);
    if (!object) return false;
    // The trace names the binary where it lies here: `go tool pprof` opens
    // a mapping's file by that name to name frames itself.
    object->path = binary_;
    format::Header header;
    header.host = "testhost";
    header.start_mono_ns = kStart;
    header.cpu_count = 1;
    header.options.sample_frequency_hz = 999;
    trace_ = dir_.file("app.trace");
    format::WriterOptions options;
    options.background = false;
    auto writer = format::Writer::create(trace_, header, options);
    if (!writer) return false;
    format::MetadataDelta delta;
    delta.time = kStart;
    // The process started as `env spinner`: env's image, mapped lower, came first.
    delta.processes.push_back(format::Process{kPid, 1, "env", {"env", "spinner"}, kStart});
    format::Mapping env{kPid, 0x400000, 0x420000, 0x1000, "/usr/bin/env", "", 5, kStart};
    delta.mappings.push_back(env);
    // The kernel maps the new image during the exec, before it reports it.
    delta.processes.push_back(format::Process{kPid, 1, "spinner", {"spinner"}, kStart + 10});
    delta.threads.push_back(format::Thread{kPid, kPid, "spinner", kStart + 10});
    for (const format::Mapping& mapping :
         testing::loaderMappings(*object, kPid, kBias, object->path, kStart + 8))
      delta.mappings.push_back(mapping);
    delta.objects.push_back(*object);
    (*writer)->addMetadata(std::move(delta));
    const uint64_t deep = (*writer)->internStack(
        std::vector<uint64_t>{kBias + here_ + 8, kBias + there_ + 9, kBias + main_ + 20});
    const uint64_t shallow =
        (*writer)->internStack(std::vector<uint64_t>{kBias + here_ + 12, kBias + main_ + 30});
    for (int i = 0; i < 40; ++i) {
      format::CpuSample sample;
      sample.time = kStart + 1000 * (i + 1);
      sample.pid = sample.tid = kPid;
      sample.stack_id = i < 30 ? deep : shallow;
      sample.weight = 1'001'001;
      sample.goid = i < 20 ? 18 : i < 26 ? 19 : 0;
      (*writer)->append(sample);
    }
    return static_cast<bool>((*writer)->close(kStart + 50 * 1000));
  }

  std::string exportPprof(std::vector<std::string> extra) {
    std::string output = dir_.file("app.pb.gz." + std::to_string(exports_++));
    std::vector<std::string> args = {trace_, "--format", "pprof", "-o", output};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(runExport(args), 0);
    return output;
  }

  TempDir dir_;
  std::string binary_, trace_;
  uint64_t here_ = 0, there_ = 0, main_ = 0;
  int exports_ = 0;
};

TEST_F(PprofOfARealBinary, TopAndListFromTheDebugFile) {
  const std::string profile = exportPprof({"--debug-dir", dir_.file("debug")});
  int status = 0;
  const std::string top = shell("go tool pprof -top -sample_index=samples " + profile, status);
  ASSERT_EQ(status, 0) << top;
  EXPECT_NE(top.find("File: spinner"), std::string::npos) << top;
  // spin_here: flat 40 (every sample's leaf), cum 40.
  EXPECT_TRUE(std::regex_search(top, std::regex(R"(\s40\s+100%\s+100%\s+40\s+100%\s+spin_here)")))
      << top;
  EXPECT_NE(top.find("spin_there"), std::string::npos) << top;

  // -list reads the source file the line table names and annotates the hot line.
  const std::string list =
      shell("go tool pprof -list=spin_here -sample_index=samples " + profile, status);
  ASSERT_EQ(status, 0) << list;
  EXPECT_NE(list.find("ROUTINE ======================== spin_here"), std::string::npos) << list;
  EXPECT_NE(list.find("spinner.c"), std::string::npos) << list;
  EXPECT_NE(list.find("the hot line"), std::string::npos) << list;

  std::string bytes = incise::testing::readFile(profile);
  auto unpacked = gzipDecompress(bytes);
  ASSERT_TRUE(unpacked);
  pb::Profile parsed;
  ASSERT_TRUE(parsed.ParseFromString(*unpacked));
  // Only the executable segment was hit, once; the first is spinner's, not env's.
  ASSERT_EQ(parsed.mapping_size(), 1);
  EXPECT_EQ(parsed.string_table(static_cast<int>(parsed.mapping(0).filename())), binary_);
  for (const pb::Function& function : parsed.function()) {
    const std::string file = parsed.string_table(static_cast<int>(function.filename()));
    EXPECT_TRUE(file.ends_with("spinner.c")) << file;
  }
}

TEST_F(PprofOfARealBinary, WithoutSymbolsPprofNamesTheFramesFromTheBinary) {
  const std::string profile = exportPprof({});
  std::string bytes = incise::testing::readFile(profile);
  auto unpacked = gzipDecompress(bytes);
  ASSERT_TRUE(unpacked);
  pb::Profile parsed;
  ASSERT_TRUE(parsed.ParseFromString(*unpacked));
  ASSERT_EQ(parsed.mapping_size(), 1);
  EXPECT_FALSE(parsed.mapping(0).has_functions());
  for (const pb::Location& location : parsed.location())
    EXPECT_EQ(location.line_size(), 0) << "no placeholder name for pprof to keep";

  // pprof opens the mapping's file (the unstripped binary at the trace's
  // path) and names the frames from it. (Go's own pprof reads no build-id, so
  // it takes a file only by the mapping's path, not from PPROF_BINARY_PATH.)
  int status = 0;
  const std::string top = shell("go tool pprof -top -sample_index=samples " + profile, status);
  ASSERT_EQ(status, 0) << top;
  EXPECT_NE(top.find("spin_here"), std::string::npos) << top;
  EXPECT_NE(top.find("spin_there"), std::string::npos) << top;
}

TEST_F(PprofOfARealBinary, GoroutinesAreLabels) {
  const std::string profile = exportPprof({});
  int status = 0;
  const std::string tags = shell("go tool pprof -tags -sample_index=samples " + profile, status);
  ASSERT_EQ(status, 0) << tags;
  // Only the labelled samples count in the goroutine tag's total.
  std::smatch total;
  ASSERT_TRUE(std::regex_search(tags, total, std::regex(R"(goroutine: Total (\d+))"))) << tags;
  EXPECT_EQ(total[1], "26") << tags;
  EXPECT_TRUE(std::regex_search(tags, std::regex(R"(\b20(\.0)? \( *[0-9.]+%\): 18\n)"))) << tags;
  EXPECT_TRUE(std::regex_search(tags, std::regex(R"(\b6(\.0)? \( *[0-9.]+%\): 19\n)"))) << tags;
  // The other labels stay: pid on every sample.
  EXPECT_TRUE(std::regex_search(tags, std::regex(R"(pid: Total 40(\.0)?\n)"))) << tags;
}

}  // namespace
}  // namespace incise::analyzer
