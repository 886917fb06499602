// speedscope and folded exports against the samples they came from.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/analyzer/export/export_test_files.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
namespace {

using testing::ExportedFile;
using testing::TraceBuilder;

// A speedscope stack's frame names, root first.
std::vector<std::string> frameNames(const nlohmann::json& frames, const nlohmann::json& stack) {
  std::vector<std::string> names;
  for (const auto& index : stack) names.push_back(frames[index.get<size_t>()]["name"]);
  return names;
}

class SampleExports : public ::testing::Test {
 protected:
  void SetUp() override {
    t_.thread(101, "worker");
    t_.thread(102, "helper");
    uint64_t a = t_.stack({"leaf_a", "main"});
    uint64_t b = t_.stack({"leaf_b", "mid", "main"});
    // Written out of time order within a thread: speedscope's must be in order.
    t_.sample(5000, 101, b, 0, 1000);
    t_.sample(1000, 101, a, 0, 1000);
    t_.sample(3000, 101, a, 0, 1000);
    t_.sample(2000, 102, b, 1, 3000);
    auto path = t_.write();
    ASSERT_TRUE(path) << path.error().message();
    path_ = *path;
  }
  TraceBuilder t_;
  std::string path_;
};

TEST_F(SampleExports, SpeedscopeHasAProfilePerThreadInTimeOrder) {
  ExportedFile file("speedscope");
  ASSERT_EQ(file.run(path_), 0);
  auto doc = nlohmann::json::parse(file.contents(), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["$schema"], "https://www.speedscope.app/file-format-schema.json");
  const auto& frames = doc["shared"]["frames"];
  auto names = [&](const nlohmann::json& stack) { return frameNames(frames, stack); };
  ASSERT_EQ(doc["profiles"].size(), 2u);
  const auto& worker = doc["profiles"][0];
  EXPECT_EQ(worker["type"], "sampled");
  EXPECT_EQ(worker["name"], "worker (pid 100, tid 101)");
  EXPECT_EQ(worker["unit"], "nanoseconds");
  ASSERT_EQ(worker["samples"].size(), 3u);
  using Names = std::vector<std::string>;
  EXPECT_EQ(names(worker["samples"][0]), (Names{"main", "leaf_a"}));         // t=1000
  EXPECT_EQ(names(worker["samples"][1]), (Names{"main", "leaf_a"}));         // t=3000
  EXPECT_EQ(names(worker["samples"][2]), (Names{"main", "mid", "leaf_b"}));  // t=5000
  EXPECT_EQ(worker["weights"], nlohmann::json({1000, 1000, 1000}));
  EXPECT_EQ(worker["endValue"], 3000);
  const auto& helper = doc["profiles"][1];
  EXPECT_EQ(helper["weights"], nlohmann::json({3000}));
  EXPECT_EQ(frames.size(), 4u);  // main, leaf_a, mid, leaf_b: shared, not repeated
}

// -e page-faults: a sample stands for its period's faults, not for time.
TEST(SpeedscopeEvents, SamplesOfAnEventWeighTheirPeriod) {
  TraceBuilder t;
  auto path = testing::writePageFaultTrace(t);
  ASSERT_TRUE(path) << path.error().message();
  ExportedFile file("speedscope");
  ASSERT_EQ(file.run(*path), 0);
  auto doc = nlohmann::json::parse(file.contents(), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  const auto& worker = doc["profiles"][0];
  EXPECT_EQ(worker["unit"], "none");
  EXPECT_EQ(worker["weights"], nlohmann::json({7, 2}));
  EXPECT_EQ(worker["endValue"], 9);
}

// A Go program's samples carry their goroutine as the root frame (the
// Chrome export's args.goroutine); other samples have none. Two goroutines
// on one path are two paths, one goroutine on two paths shares its frame.
TEST(SpeedscopeGoroutines, EachGoSampleStartsWithItsGoroutine) {
  TraceBuilder t;
  t.thread(101, "go-worker");
  uint64_t hot = t.stack({"main.handle", "runtime.goexit"});
  uint64_t cold = t.stack({"main.idle", "runtime.goexit"});
  t.sample(1000, 101, hot, 0, 1000, TraceBuilder::kPid, 18);
  t.sample(2000, 101, hot, 0, 1000, TraceBuilder::kPid, 19);
  t.sample(3000, 101, cold, 0, 1000, TraceBuilder::kPid, 18);
  t.sample(4000, 101, hot, 0, 1000);  // on g0 or not Go: no goroutine
  auto path = t.write();
  ASSERT_TRUE(path) << path.error().message();
  ExportedFile file("speedscope");
  ASSERT_EQ(file.run(*path), 0);
  auto doc = nlohmann::json::parse(file.contents(), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << file.contents();
  const auto& frames = doc["shared"]["frames"];
  auto names = [&](const nlohmann::json& stack) { return frameNames(frames, stack); };
  ASSERT_EQ(doc["profiles"].size(), 1u);
  const auto& samples = doc["profiles"][0]["samples"];
  ASSERT_EQ(samples.size(), 4u);
  using Names = std::vector<std::string>;
  EXPECT_EQ(names(samples[0]), (Names{"[goroutine 18]", "runtime.goexit", "main.handle"}));
  EXPECT_EQ(names(samples[1]), (Names{"[goroutine 19]", "runtime.goexit", "main.handle"}));
  EXPECT_EQ(names(samples[2]), (Names{"[goroutine 18]", "runtime.goexit", "main.idle"}));
  EXPECT_EQ(names(samples[3]), (Names{"runtime.goexit", "main.handle"}));
  EXPECT_EQ(samples[0][0], samples[2][0]);  // one frame per goroutine
  EXPECT_EQ(frames.size(), 5u);
}

// What speedscope's importer requires of a sampled profile, checked on every
// profile: frame indexes in range, one weight per sample, endValue the sum.
TEST_F(SampleExports, SpeedscopeStructureIsStrict) {
  ExportedFile file("speedscope");
  ASSERT_EQ(file.run(path_), 0);
  auto doc = nlohmann::json::parse(file.contents(), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << file.contents();
  ASSERT_TRUE(doc["shared"]["frames"].is_array());
  size_t frames = doc["shared"]["frames"].size();
  for (const auto& frame : doc["shared"]["frames"]) EXPECT_TRUE(frame["name"].is_string());
  ASSERT_TRUE(doc["profiles"].is_array());
  EXPECT_LT(doc["activeProfileIndex"].get<size_t>(), doc["profiles"].size());
  uint64_t samples = 0;
  for (const auto& profile : doc["profiles"]) {
    SCOPED_TRACE(profile["name"].dump());
    EXPECT_EQ(profile["type"], "sampled");
    EXPECT_TRUE(profile["name"].is_string());
    EXPECT_TRUE(profile["unit"] == "nanoseconds" || profile["unit"] == "none");
    EXPECT_EQ(profile["startValue"], 0);
    ASSERT_TRUE(profile["samples"].is_array());
    ASSERT_EQ(profile["samples"].size(), profile["weights"].size());
    uint64_t total = 0;
    for (const auto& weight : profile["weights"]) total += weight.get<uint64_t>();
    EXPECT_EQ(profile["endValue"].get<uint64_t>(), total);
    for (const auto& stack : profile["samples"]) {
      ASSERT_TRUE(stack.is_array());
      EXPECT_FALSE(stack.empty());
      for (const auto& index : stack) {
        ASSERT_TRUE(index.is_number_unsigned());
        EXPECT_LT(index.get<size_t>(), frames);
      }
    }
    samples += profile["samples"].size();
  }
  EXPECT_EQ(samples, 4u);
}

TEST_F(SampleExports, FoldedCountsSamplesPerPath) {
  ExportedFile file("folded");
  ASSERT_EQ(file.run(path_), 0);
  EXPECT_EQ(file.contents(), "main;leaf_a 2\nmain;mid;leaf_b 2\n");
}

TEST_F(SampleExports, BadFormatIsAUsageError) {
  ExportedFile file("svg");
  EXPECT_EQ(file.run(path_), 2);
  EXPECT_EQ(ExportedFile("pprof").run("/nonexistent.trace"), 1);
}

}  // namespace
}  // namespace incise::analyzer
