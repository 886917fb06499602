// The pprof export parsed back with libprotobuf: sample counts, periods,
// functions, labels and mappings match the trace it came from; when Go is
// installed, `go tool pprof -top` prints the same totals and per-function
// counts. The allocation profile (--alloc) likewise, as Go's heap profile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/diff/trace_facts.h"
#include "analyzer/export/gzip.h"
#include "analyzer/export/profile.pb.h"
#include "base/hex.h"
#include "tests/analyzer/export/export_test_files.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
namespace {

namespace pb = perftools::profiles;
using testing::ExportedFile;
using testing::TraceBuilder;

class PprofExport : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_.thread(101, "worker");
    trace_.thread(102, "helper");
    uint64_t a = trace_.stack({"leaf_a", "main"});
    uint64_t b = trace_.stack({"leaf_b", "mid", "main"});
    uint64_t time = 0;
    // Thread 101 serves request 7, then 8 (from halfway between its reads
    // at 5000 and 8500); 102 never reads the context.
    trace_.context("req", "request_id");
    trace_.contextChange(500, 101, 0, 7);
    trace_.contextChange(8500, 101, 0, 8, /*since=*/5000);
    for (int i = 0; i < 5; ++i) trace_.sample(time += 1000, 101, a, 0, 1000);
    for (int i = 0; i < 3; ++i) trace_.sample(time += 1000, 102, b, 1, 2000);
    for (int i = 0; i < 2; ++i) trace_.sample(time += 1000, 101, b, 0, 1000);
    auto path = trace_.write();
    ASSERT_TRUE(path) << path.error().message();
    path_ = *path;
    ASSERT_EQ(file_.run(path_), 0);
    auto unpacked = gzipDecompress(file_.contents());
    ASSERT_TRUE(unpacked) << unpacked.error().message();
    ASSERT_TRUE(profile_.ParseFromString(*unpacked));
  }

  const std::string& str(int64_t index) const {
    return profile_.string_table(static_cast<int>(index));
  }
  const pb::Location& location(uint64_t id) const {
    return profile_.location(static_cast<int>(id - 1));
  }
  std::string functionAt(uint64_t location_id) const {
    const pb::Location& loc = location(location_id);
    EXPECT_EQ(loc.id(), location_id);
    const pb::Function& fn = profile_.function(static_cast<int>(loc.line(0).function_id() - 1));
    return str(fn.name());
  }
  int64_t label(const pb::Sample& sample, const std::string& key) const {
    for (const auto& l : sample.label()) {
      if (str(l.key()) == key) return l.num();
    }
    return -1;
  }

  TraceBuilder trace_;
  std::string path_;
  ExportedFile file_{"pprof"};
  pb::Profile profile_;
};

TEST_F(PprofExport, SampleTypesAndTotalsMatchTheTrace) {
  ASSERT_GT(profile_.string_table_size(), 0);
  EXPECT_EQ(profile_.string_table(0), "");
  ASSERT_EQ(profile_.sample_type_size(), 2);
  EXPECT_EQ(str(profile_.sample_type(0).type()), "samples");
  EXPECT_EQ(str(profile_.sample_type(0).unit()), "count");
  EXPECT_EQ(str(profile_.sample_type(1).type()), "cpu");
  EXPECT_EQ(str(profile_.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(profile_.period(), 1'000'000'000 / 999);  // TraceBuilder records at 999 Hz
  int64_t samples = 0, weight = 0;
  for (const auto& s : profile_.sample()) {
    ASSERT_EQ(s.value_size(), 2);
    samples += s.value(0);
    weight += s.value(1);
  }
  EXPECT_EQ(samples, 10);
  EXPECT_EQ(weight, 5 * 1000 + 3 * 2000 + 2 * 1000);
}

TEST_F(PprofExport, StacksFunctionsAndLabels) {
  std::map<std::string, int64_t> by_leaf;
  std::map<int64_t, int64_t> by_tid;
  for (const auto& s : profile_.sample()) {
    ASSERT_GE(s.location_id_size(), 2);
    by_leaf[functionAt(s.location_id(0))] += s.value(0);
    EXPECT_EQ(functionAt(s.location_id(s.location_id_size() - 1)), "main");
    by_tid[label(s, "tid")] += s.value(0);
    EXPECT_EQ(label(s, "pid"), TraceBuilder::kPid);
  }
  EXPECT_EQ(by_leaf, (std::map<std::string, int64_t>{{"leaf_a", 5}, {"leaf_b", 5}}));
  EXPECT_EQ(by_tid, (std::map<int64_t, int64_t>{{101, 7}, {102, 3}}));
  // Leaf addresses are the frames as recorded.
  EXPECT_EQ(location(profile_.sample(0).location_id(0)).address() % TraceBuilder::kFunctionSize,
            TraceBuilder::kFrameOffset);
}

TEST_F(PprofExport, ContextValuesAreSampleLabels) {
  std::map<int64_t, int64_t> by_request;  // -1: no label
  for (const auto& s : profile_.sample()) {
    by_request[label(s, "req")] += s.value(0);
    if (label(s, "tid") == 102) {
      EXPECT_EQ(label(s, "req"), -1);
    }
  }
  EXPECT_EQ(by_request, (std::map<int64_t, int64_t>{{7, 5}, {8, 2}, {-1, 3}}));
}

TEST_F(PprofExport, MappingsCarryBuildIds) {
  ASSERT_EQ(profile_.mapping_size(), 1);
  const pb::Mapping& m = profile_.mapping(0);
  EXPECT_EQ(str(m.filename()), "/fake/app");
  EXPECT_EQ(str(m.build_id()), hexBytes("build-id-app"));
  EXPECT_TRUE(m.has_functions());
  for (const auto& loc : profile_.location()) {
    EXPECT_EQ(loc.mapping_id(), m.id());
    EXPECT_GE(loc.address(), m.memory_start());
    EXPECT_LT(loc.address(), m.memory_limit());
  }
}

// `go tool pprof -top` output and exit status; "" and skipped when Go is absent.
std::string goPprofTop(const std::string& flags, const std::string& file, int& status) {
  std::string command = "go tool pprof -top " + flags + " " + file + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) {
    status = -1;
    return "";
  }
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe)) output += buffer;
  status = pclose(pipe);
  return output;
}

// "Showing nodes accounting for 10, 100% of 10 total" -> "10".
std::string totalOf(const std::string& top) {
  std::smatch match;
  static const std::regex kTotal(R"(of (\S+) total)");
  return std::regex_search(top, match, kTotal) ? match[1].str() : "";
}

// The flat column of `function`'s row: "  5 50.00% 50.00%  5 50.00%  leaf_a" -> "5".
std::string flatOf(const std::string& top, const std::string& function) {
  std::istringstream lines(top);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
    if (w.size() == 6 && w.back() == function) return w[0];
  }
  return "";
}

TEST_F(PprofExport, GoToolPprofTotalsMatchTheTrace) {
  if (std::system("command -v go >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "go is not installed: `go tool pprof` check skipped";
  }
  int status = 0;
  std::string counts = goPprofTop("-sample_index=samples", file_.path(), status);
  ASSERT_EQ(status, 0) << counts;
  EXPECT_EQ(totalOf(counts), "10") << counts;
  EXPECT_EQ(flatOf(counts, "leaf_a"), "5") << counts;
  EXPECT_EQ(flatOf(counts, "leaf_b"), "5") << counts;
  EXPECT_EQ(flatOf(counts, "main"), "0") << counts;

  std::string cpu = goPprofTop("-sample_index=cpu -unit=ns", file_.path(), status);
  ASSERT_EQ(status, 0) << cpu;
  EXPECT_EQ(totalOf(cpu), std::to_string(5 * 1000 + 3 * 2000 + 2 * 1000) + "ns") << cpu;
  EXPECT_EQ(flatOf(cpu, "leaf_a"), "5000ns") << cpu;
  EXPECT_EQ(flatOf(cpu, "leaf_b"), "8000ns") << cpu;
}

// The pprof export of the trace at `path`, parsed back.
void exportProfile(const std::string& path, pb::Profile& profile,
                   std::vector<std::string> extra = {}) {
  ExportedFile file{"pprof"};
  ASSERT_EQ(file.run(path, std::move(extra)), 0);
  auto unpacked = gzipDecompress(file.contents());
  ASSERT_TRUE(unpacked) << unpacked.error().message();
  ASSERT_TRUE(profile.ParseFromString(*unpacked));
}

// -e page-faults: the weight type is the event, counted; pprof opens on it.
TEST(PprofExportEvents, AnEventThatIsNotAClockIsItsOwnSampleType) {
  TraceBuilder trace;
  auto path = testing::writePageFaultTrace(trace);
  ASSERT_TRUE(path) << path.error().message();
  pb::Profile profile;
  ASSERT_NO_FATAL_FAILURE(exportProfile(*path, profile));
  auto str = [&](int64_t index) { return profile.string_table(static_cast<int>(index)); };
  ASSERT_EQ(profile.sample_type_size(), 2);
  EXPECT_EQ(str(profile.sample_type(1).type()), "page-faults");
  EXPECT_EQ(str(profile.sample_type(1).unit()), "count");
  EXPECT_EQ(str(profile.default_sample_type()), "page-faults");
  int64_t samples = 0, faults = 0;
  for (const auto& s : profile.sample()) {
    samples += s.value(0);
    faults += s.value(1);
  }
  EXPECT_EQ(samples, 2);
  EXPECT_EQ(faults, 9);
}

// main in /fake/app, declared first (the lowest mapping, as in
// /proc/PID/maps), and memcpy in /fake/libc, where the first sample lands,
// exported. With `exec_reported_at`, the process's record comes then, after
// its mappings, as the kernel reports an exec.
void exportAppAndLibc(pb::Profile& profile, std::optional<uint64_t> exec_reported_at = {}) {
  TraceBuilder trace;
  trace.function("main");
  trace.function("memcpy", "libc");
  if (exec_reported_at) trace.process(TraceBuilder::kPid, "app", *exec_reported_at);
  trace.thread(101, "worker");
  trace.sample(1000, 101, trace.stack({"memcpy"}));
  trace.sample(2000, 101, trace.stack({"memcpy", "main"}));
  auto path = trace.write();
  ASSERT_TRUE(path) << path.error().message();
  ASSERT_NO_FATAL_FAILURE(exportProfile(*path, profile));
}

// The first sample lands in a library; pprof must still list the executable
// first, because readers print the first mapping as the profile's "File:".
TEST(PprofExportMappings, ExecutableComesFirstWhateverIsHitFirst) {
  pb::Profile profile;
  ASSERT_NO_FATAL_FAILURE(exportAppAndLibc(profile));
  ASSERT_EQ(profile.mapping_size(), 2);
  EXPECT_EQ(profile.string_table(static_cast<int>(profile.mapping(0).filename())), "/fake/app");
  EXPECT_EQ(profile.string_table(static_cast<int>(profile.mapping(1).filename())), "/fake/libc");
  // Locations still point at the mapping holding them, by id.
  for (const auto& location : profile.location()) {
    const auto holder =
        std::find_if(profile.mapping().begin(), profile.mapping().end(),
                     [&](const pb::Mapping& m) { return m.id() == location.mapping_id(); });
    ASSERT_NE(holder, profile.mapping().end());
    EXPECT_GE(location.address(), holder->memory_start());
    EXPECT_LT(location.address(), holder->memory_limit());
  }
}

// The kernel maps an exec'd image before it reports the exec, and the
// libraries after: the executable is still the one named as the process.
TEST(PprofExportMappings, TheExecutableIsFoundByNameThoughMappedBeforeTheExec) {
  pb::Profile profile;
  ASSERT_NO_FATAL_FAILURE(exportAppAndLibc(profile, /*exec_reported_at=*/500));
  ASSERT_EQ(profile.mapping_size(), 2);
  EXPECT_EQ(profile.string_table(static_cast<int>(profile.mapping(0).filename())), "/fake/app");
}

// parse: 3 samples of 64-byte blocks standing for 64 KiB each (1,024
// blocks), two freed; leak: one 1 MiB block never freed, by another thread.
Result<std::string> writeAllocTrace(TraceBuilder& trace) {
  trace.setAllocSampleBytes(65'536);
  trace.thread(101, "worker");
  trace.thread(102, "other");
  const uint64_t parse = trace.stack({"malloc", "parse", "main"});
  const uint64_t leak = trace.stack({"calloc", "leak", "main"});
  for (uint64_t i = 0; i < 3; ++i)
    trace.allocation(1000 + i, 101, 0x1000 + 64 * i, 64, 65'536, parse);
  trace.freed(2000, 101, 0x1000);
  trace.freed(2001, 101, 0x1040);
  trace.allocation(3000, 102, 0x9000, 1 << 20, 1 << 20, leak);
  return trace.write();
}

class PprofAllocExport : public ::testing::Test {
 protected:
  void SetUp() override {
    auto path = writeAllocTrace(trace_);
    ASSERT_TRUE(path) << path.error().message();
    ASSERT_EQ(file_.run(*path, {"--alloc"}), 0);
    auto unpacked = gzipDecompress(file_.contents());
    ASSERT_TRUE(unpacked) << unpacked.error().message();
    ASSERT_TRUE(profile_.ParseFromString(*unpacked));
  }
  const std::string& str(int64_t index) const {
    return profile_.string_table(static_cast<int>(index));
  }
  // The values of the sample whose leaf-most frame outside the allocator is `site`.
  std::vector<int64_t> valuesOf(const std::string& site) const {
    for (const auto& sample : profile_.sample()) {
      for (uint64_t id : sample.location_id()) {
        const pb::Location& loc = profile_.location(static_cast<int>(id - 1));
        const pb::Function& fn = profile_.function(static_cast<int>(loc.line(0).function_id() - 1));
        if (str(fn.name()) == site) return {sample.value().begin(), sample.value().end()};
      }
    }
    return {};
  }

  TraceBuilder trace_;
  ExportedFile file_{"pprof"};
  pb::Profile profile_;
};

TEST_F(PprofAllocExport, HeapProfileTypesAndEstimatedValues) {
  ASSERT_EQ(profile_.sample_type_size(), 4);
  const char* types[][2] = {{"alloc_objects", "count"},
                            {"alloc_space", "bytes"},
                            {"inuse_objects", "count"},
                            {"inuse_space", "bytes"}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(str(profile_.sample_type(i).type()), types[i][0]);
    EXPECT_EQ(str(profile_.sample_type(i).unit()), types[i][1]);
  }
  EXPECT_EQ(str(profile_.default_sample_type()), "inuse_space");
  EXPECT_EQ(str(profile_.period_type().type()), "space");
  EXPECT_EQ(str(profile_.period_type().unit()), "bytes");
  EXPECT_EQ(profile_.period(), 65'536);
  ASSERT_EQ(profile_.sample_size(), 2);
  EXPECT_EQ(valuesOf("parse"), (std::vector<int64_t>{3 * 1024, 3 * 65'536, 1024, 65'536}));
  EXPECT_EQ(valuesOf("leak"), (std::vector<int64_t>{1, 1 << 20, 1, 1 << 20}));
  // Samples are per process, not per thread.
  for (const auto& sample : profile_.sample()) {
    ASSERT_EQ(sample.label_size(), 1);
    EXPECT_EQ(str(sample.label(0).key()), "pid");
  }
}

TEST_F(PprofAllocExport, GoToolPprofReadsEachSampleIndex) {
  if (std::system("command -v go >/dev/null 2>&1") != 0) {
    if (const char* ci = std::getenv("CI"); ci && std::string(ci) == "true")
      FAIL() << "go is missing under CI=true (tools/setup installs golang-go)";
    GTEST_SKIP() << "go is not installed: `go tool pprof` check skipped";
  }
  int status = 0;
  std::string objects = goPprofTop("-sample_index=alloc_objects", file_.path(), status);
  ASSERT_EQ(status, 0) << objects;
  EXPECT_EQ(totalOf(objects), "3073") << objects;
  EXPECT_EQ(flatOf(objects, "malloc"), "3072") << objects;
  std::string live = goPprofTop("-sample_index=inuse_space -unit=B", file_.path(), status);
  ASSERT_EQ(status, 0) << live;
  EXPECT_EQ(totalOf(live), std::to_string(65'536 + (1 << 20)) + "B") << live;
  EXPECT_EQ(flatOf(live, "calloc"), std::to_string(1 << 20) + "B") << live;
  EXPECT_EQ(flatOf(live, "malloc"), "65536B") << live;
}

TEST(PprofAllocExportErrors, ATraceWithoutAllocationsAndOtherFormatsAreRefused) {
  TraceBuilder trace;
  auto path = testing::writePageFaultTrace(trace);
  ASSERT_TRUE(path) << path.error().message();
  ExportedFile file("pprof");
  EXPECT_EQ(file.run(*path, {"--alloc"}), 1);
  ExportedFile chrome("chrome");
  EXPECT_NE(chrome.run(*path, {"--alloc"}), 0);
}

TEST(Gzip, RoundTripAndDamage) {
  std::string text(100000, 'x');
  for (size_t i = 0; i < text.size(); i += 7) text[i] = static_cast<char>('a' + i % 26);
  auto packed = gzipCompress(text);
  ASSERT_TRUE(packed);
  EXPECT_LT(packed->size(), text.size());
  auto back = gzipDecompress(*packed);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, text);
  EXPECT_FALSE(gzipDecompress(packed->substr(0, packed->size() / 2)));
  EXPECT_FALSE(gzipDecompress("not gzip at all"));
  EXPECT_FALSE(gzipDecompress(*packed, 1000));  // bounded
}

}  // namespace
}  // namespace incise::analyzer
