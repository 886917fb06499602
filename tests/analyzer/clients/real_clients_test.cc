// Exports and flame graphs opened in the real programs people open them
// with, driven headless through tools/clients (label "clients"):
//   - speedscope's app imports the Chrome export without a warning (slices
//     that overlapped by float noise gave one warning each, and wrong
//     totals), and opens the speedscope export on the busiest thread;
//   - Chromium parses every SVG flame graph as XML, even with control
//     characters and invalid UTF-8 in the names; labels fit their frames as
//     Chromium draws them, at load and zoomed; a click zooms; a search says
//     the share the matches cover; in a differential graph each trace's own
//     share, which is what `incise top` says of that trace.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analyzer/diff/diff_report.h"
#include "analyzer/render/flame_graph.h"
#include "tests/analyzer/clients/client_run.h"
#include "tests/analyzer/export/export_test_files.h"
#include "tests/analyzer/reports/report_json_runner.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
int runTop(const std::vector<std::string>& args);

namespace {

using incise::testing::runClient;
using incise::testing::tempPath;
using testing::ExportedFile;
using testing::TraceBuilder;

struct RemoveFile {
  std::string path;
  ~RemoveFile() { std::filesystem::remove(path); }
};

std::string percentText(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f%%", 100 * share);
  return buffer;
}

// Two threads taking turns on a cpu at times whose µs have three decimals
// no double holds (what made adjacent slices overlap), with samples.
std::string writeTurnTaking(TraceBuilder& b) {
  b.thread(101, "first");
  b.thread(102, "second");
  uint64_t hot = b.stack({"compute", "main"});
  uint64_t time = 1'000'001;
  b.sched(time, 0, 0, 0, 101);
  for (int i = 0; i < 300; ++i) {
    uint64_t next = time + 1'234'567 + static_cast<uint64_t>(i) * 7'919;
    b.sample((time + next) / 2, i % 2 == 0 ? 101 : 102, hot);
    time = next;
    b.sched(time, 0, i % 2 == 0 ? 101 : 102, 0, i % 2 == 0 ? 102 : 101);
  }
  b.setEnd(time + 333);
  auto path = b.write();
  EXPECT_TRUE(path) << path.error().message();
  return path ? *path : "";
}

TEST(Speedscope, ImportsTheChromeExportWithoutAWarning) {
  INCISE_REQUIRE_CLIENTS();
  TraceBuilder b;
  std::string trace = writeTurnTaking(b);
  ExportedFile chrome("chrome");
  ASSERT_EQ(chrome.run(trace), 0);
  // The same kind of slices written as three-decimal µs, as the export
  // once did: speedscope must object to them, or the check proves nothing.
  std::string noisy = tempPath(".json");
  RemoveFile cleanup{noisy};
  std::ofstream(noisy) << R"({"traceEvents":[)"
                       << R"({"ph":"X","name":"running","pid":1,"tid":1,"ts":0.1,"dur":0.2},)"
                       << R"({"ph":"X","name":"runnable","pid":1,"tid":1,"ts":0.3,"dur":0.4},)"
                       << R"({"ph":"X","name":"running","pid":1,"tid":1,"ts":0.7,"dur":0.5}]})";

  std::string error;
  nlohmann::json pages = runClient("check_speedscope.js", {chrome.path(), noisy}, &error);
  ASSERT_TRUE(pages.is_array()) << error;
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_TRUE(pages[0]["warnings"].empty()) << pages[0].dump(1);
  EXPECT_TRUE(pages[0]["errors"].empty()) << pages[0].dump(1);
  // Both threads' tracks were imported (speedscope shows "(1/2)").
  EXPECT_NE(pages[0]["text"].get<std::string>().find("(1/2)"), std::string::npos)
      << pages[0].dump(1);
  EXPECT_FALSE(pages[1]["warnings"].empty())
      << "speedscope took overlapping slices silently: " << pages[1].dump(1);
  EXPECT_NE(pages[1]["warnings"].dump().find("Tried to end"), std::string::npos)
      << pages[1].dump(1);
}

TEST(Speedscope, OpensItsExportOnTheBusiestThread) {
  INCISE_REQUIRE_CLIENTS();
  TraceBuilder b;
  b.thread(101, "rare");
  b.thread(102, "busy");
  b.thread(103, "once");
  uint64_t stack = b.stack({"work", "main"});
  for (uint64_t i = 0; i < 7; ++i) b.sample(1000 + i * 10, 101, stack);
  for (uint64_t i = 0; i < 60; ++i) b.sample(2000 + i * 10, 102, stack);
  b.sample(5000, 103, stack);
  auto trace = b.write();
  ASSERT_TRUE(trace);
  ExportedFile speedscope("speedscope");
  ASSERT_EQ(speedscope.run(*trace), 0);
  std::string error;
  nlohmann::json pages = runClient("check_speedscope.js", {speedscope.path()}, &error);
  ASSERT_TRUE(pages.is_array() && pages.size() == 1u) << error;
  EXPECT_TRUE(pages[0]["warnings"].empty()) << pages[0].dump(1);
  // Profiles are by tid: rare, busy, once. speedscope names the one it shows
  // by its place: the second of three.
  std::string text = pages[0]["text"];
  EXPECT_NE(text.find("(2/3)"), std::string::npos) << text;
}

FoldedStacks hostileStacks() {
  FoldedStacks folded;
  folded.add({"main", "parse", "memcpy"}, 60);
  folded.add({"main", "parse"}, 15);
  folded.add({"main", "\x1b]0;PWNED\x07 title", "bad \xff\xfe utf-8"}, 10);
  folded.add({"main", std::string(300, 'w') + "ide_template<" + std::string(80, 'T') + ">"}, 10);
  folded.add({"main", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5 <&\"'>"}, 5);
  return folded;
}

TEST(FlameGraphs, ParseZoomSearchAndFitInChromium) {
  INCISE_REQUIRE_CLIENTS();
  for (const char* suffix : {".svg", ".html"}) {
    SCOPED_TRACE(suffix);
    std::string file = tempPath(suffix);
    RemoveFile cleanup{file};
    {
      std::ofstream out(file);
      FlameGraphOptions options{.title = "hostile \x1b[31m names \xff"};
      if (std::string(suffix) == ".svg") {
        writeFlameGraphSvg(hostileStacks(), options, out);
      } else {
        writeFlameGraphHtml(hostileStacks(), options, out);
      }
    }
    std::string error;
    nlohmann::json page = runClient("check_flame_graph.js", {file, "^parse$", "PWNED"}, &error);
    ASSERT_TRUE(page.is_object()) << error;
    ASSERT_TRUE(page["parsed"].get<bool>()) << page.dump(1);
    EXPECT_TRUE(page["messages"]["errors"].empty()) << page.dump(1);
    EXPECT_GT(page["labels"].get<int>(), 3);
    EXPECT_TRUE(page["overflow_at_load"].empty()) << page.dump(1);
    EXPECT_TRUE(page["overflow_zoomed"].empty()) << page.dump(1);
    EXPECT_TRUE(page["zoom"]["full_width"].get<bool>()) << page.dump(1);
    ASSERT_EQ(page["searches"].size(), 2u);
    EXPECT_EQ(page["searches"][0]["status"], "matched 1 frames, 75.00%");
    EXPECT_EQ(page["searches"][1]["status"], "matched 1 frames, 10.00%");
  }
}

// Searching a differential graph for a function gives each trace's own
// share of its samples that holds it: `incise top`'s total % on each side.
TEST(FlameGraphs, DiffSearchGivesEachTracesShareAsTopDoes) {
  INCISE_REQUIRE_CLIENTS();
  auto build = [](TraceBuilder& t, int a, int b, int c) {
    t.thread(101, "worker");
    uint64_t sa = t.stack({"leaf_a", "main"}), sb = t.stack({"leaf_b", "main"});
    uint64_t sc = t.stack({"leaf_c", "mid", "main"}), sd = t.stack({"leaf_c", "other", "main"});
    uint64_t time = 1000;
    for (int i = 0; i < a; ++i) t.sample(time += 1000, 101, sa);
    for (int i = 0; i < b; ++i) t.sample(time += 1000, 101, sb);
    for (int i = 0; i < c; ++i) t.sample(time += 1000, 101, i % 3 ? sc : sd);
    t.setEnd(time + 1000);
  };
  TraceBuilder base, next;
  build(base, 6, 3, 2);
  build(next, 2, 5, 9);
  auto base_path = base.write(), new_path = next.write();
  ASSERT_TRUE(base_path && new_path);
  std::string html = tempPath(".html");
  RemoveFile cleanup{html};
  DiffOptions options;
  options.base_path = *base_path;
  options.new_path = *new_path;
  options.flame_output = html;
  options.trace.progress = false;
  std::ostringstream out;
  ASSERT_EQ(runDiffReport(options, out), 0);

  std::string error;
  nlohmann::json page = runClient("check_flame_graph.js", {html, "^leaf_c$", "^main$"}, &error);
  ASSERT_TRUE(page.is_object()) << error;
  ASSERT_EQ(page["searches"].size(), 2u) << page.dump(1);
  for (const auto& [function, search] :
       {std::pair{"leaf_c", page["searches"][0]}, {"main", page["searches"][1]}}) {
    std::string expected;
    for (const auto& [side, path] : {std::pair{"base", *base_path}, {"new", *new_path}}) {
      nlohmann::json top;
      ASSERT_EQ(testing::runReportJson(runTop, {path, "--limit", "0"}, top), 0);
      for (const auto& row : top["rows"]) {
        if (row["name"] != function) continue;
        double share = row["total_samples"].get<double>() / top["samples"].get<double>();
        expected += std::string(expected.empty() ? "" : ", ") + side + " " + percentText(share);
      }
    }
    std::string status = search["status"];
    EXPECT_NE(status.find(expected), std::string::npos) << function << ": " << status;
  }
}

}  // namespace
}  // namespace incise::analyzer
