// incise diff on two traces built with known answers: exact share, lock
// percentile, off-CPU, latency and allocation deltas, through the JSON
// document the command prints.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "analyzer/diff/diff_report.h"
#include "tests/analyzer/reports/report_json_runner.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
int runTop(const std::vector<std::string>& args);

namespace {

using testing::TraceBuilder;

constexpr uint64_t kEnd = 10'000'000;  // 10 ms
constexpr uint64_t kLock = 0x7000;

// Samples: `a` on leaf_a<-main, `b` on leaf_b<-main, `c` on leaf_c<-mid<-main.
// Locks at site "update": waits and holds as given. One blocked off-CPU span.
void build(TraceBuilder& t, int a, int b, int c, const std::vector<uint64_t>& waits,
           const std::vector<uint64_t>& holds, uint64_t blocked_ns) {
  t.thread(101, "worker");
  uint64_t sa = t.stack({"leaf_a", "main"}), sb = t.stack({"leaf_b", "main"});
  uint64_t sc = t.stack({"leaf_c", "mid", "main"});
  uint64_t time = 1000;
  for (int i = 0; i < a; ++i) t.sample(time += 1000, 101, sa);
  for (int i = 0; i < b; ++i) t.sample(time += 1000, 101, sb);
  for (int i = 0; i < c; ++i) t.sample(time += 1000, 101, sc);
  uint64_t site = t.stack({"update", "main"});
  uint64_t at = 100'000;
  for (size_t i = 0; i < waits.size(); ++i) {
    t.lock(101, kLock, at, at + waits[i], at + waits[i] + holds[i], site);
    at += 100'000;
  }
  uint64_t off = t.stack({"read_wait", "main"});
  t.sched(1'000'000, 0, 101, /*state=*/1, 0, off);
  t.sched(1'000'000 + blocked_ns, 0, 0, 0, 101);
  t.setEnd(kEnd);
}

nlohmann::json diffDocument(const std::string& base, const std::string& next) {
  DiffOptions options;
  options.base_path = base;
  options.new_path = next;
  options.json = true;
  options.limit = 0;
  options.trace.progress = false;
  std::ostringstream out;
  EXPECT_EQ(runDiffReport(options, out), 0);
  return nlohmann::json::parse(out.str());
}

const nlohmann::json& row(const nlohmann::json& rows, const std::string& key,
                          const nlohmann::json& value) {
  for (const auto& r : rows) {
    if (r[key] == value) return r;
  }
  static const nlohmann::json missing;
  ADD_FAILURE() << "no row with " << key << " = " << value.dump();
  return missing;
}

// The text report of BASE -> NEW has the section `heading`, with `figure`
// in it; that of a trace without such rows (build's) has none.
void expectSectionOnlyWhereRows(const std::string& base, const std::string& next,
                                const std::string& heading, const std::string& figure) {
  DiffOptions options;
  options.base_path = base;
  options.new_path = next;
  options.trace.progress = false;
  std::ostringstream text;
  ASSERT_EQ(runDiffReport(options, text), 0);
  EXPECT_NE(text.str().find(heading), std::string::npos) << text.str();
  EXPECT_NE(text.str().find(figure), std::string::npos) << text.str();
  TraceBuilder plain;
  build(plain, 1, 1, 0, {100}, {100}, 1'000);
  auto plain_path = plain.write();
  ASSERT_TRUE(plain_path) << plain_path.error().message();
  options.base_path = options.new_path = *plain_path;
  std::ostringstream none;
  ASSERT_EQ(runDiffReport(options, none), 0);
  EXPECT_EQ(none.str().find(heading), std::string::npos) << none.str();
}

// Thread 101 holds request 1 over its leaf_a samples, 2 over leaf_b's and 3
// over leaf_c's and its blocked span (each change read at the next sample).
void addRequests(TraceBuilder& t, int a, int b) {
  t.context("req", "request_id");
  t.contextChange(1000, 101, 0, 1);
  const uint64_t first_b = 1000 * (a + 2), first_c = first_b + 1000 * b;
  t.contextChange(first_b, 101, 0, 2, /*since=*/first_b - 1000);
  t.contextChange(first_c, 101, 0, 3, /*since=*/first_c - 1000);
}

TEST(DiffReport, WhereComparesTheEventsOfThreadsHoldingTheValues) {
  TraceBuilder base, next;
  build(base, 6, 4, 1, {100}, {1000}, 1'000'000);
  addRequests(base, 6, 4);
  build(next, 2, 4, 2, {400}, {1000}, 3'000'000);
  addRequests(next, 2, 4);
  auto base_path = base.write(), new_path = next.write();
  ASSERT_TRUE(base_path) << base_path.error().message();
  ASSERT_TRUE(new_path) << new_path.error().message();
  DiffOptions options;
  options.base_path = *base_path;
  options.new_path = *new_path;
  options.json = true;
  options.limit = 0;
  options.trace.progress = false;
  auto where = [&](const std::string& text) {
    auto condition = Filter::parseWhere(text);
    EXPECT_TRUE(condition);
    options.trace.filter.where = {*condition};
    std::ostringstream out;
    EXPECT_EQ(runDiffReport(options, out), 0);
    return nlohmann::json::parse(out.str());
  };
  // Request 2: leaf_b alone on both sides, so no share moved.
  nlohmann::json two = where("req=2");
  const auto& b = row(two["functions"], "name", "leaf_b");
  EXPECT_DOUBLE_EQ(b["base_self_percent"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(b["self_delta_points"].get<double>(), 0.0);
  EXPECT_EQ(b["base_self_samples"], 4);
  EXPECT_EQ(two["functions_total"], 2);  // leaf_b, main
  EXPECT_EQ(two["off_cpu_stacks_total"], 0);
  EXPECT_EQ(two["lock_sites_total"], 0);  // the lock was taken under request 3
  nlohmann::json three = where("req=3");
  EXPECT_DOUBLE_EQ(row(three["functions"], "name", "leaf_c")["self_delta_points"].get<double>(),
                   0.0);
  EXPECT_EQ(three["off_cpu_stacks_total"], 1);
  EXPECT_EQ(three["lock_sites_total"], 1);
  // A context the traces lack: an error naming it.
  options.trace.filter.where = {*Filter::parseWhere("user=1")};
  std::ostringstream out;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(runDiffReport(options, out), 1);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("--where user"), std::string::npos);
}

TEST(DiffReport, ExactDeltas) {
  TraceBuilder base, next;
  build(base, 6, 4, 0, {100, 200, 300}, {1000, 2000, 3000}, 1'000'000);
  build(next, 2, 4, 2, {400, 500, 600}, {1000, 1000, 1000}, 3'000'000);
  auto base_path = base.write(), new_path = next.write();
  ASSERT_TRUE(base_path) << base_path.error().message();
  ASSERT_TRUE(new_path) << new_path.error().message();
  nlohmann::json doc = diffDocument(*base_path, *new_path);
  ASSERT_TRUE(doc.is_object());

  EXPECT_EQ(doc["base"]["samples"], 10);
  EXPECT_EQ(doc["new"]["samples"], 8);
  const auto& functions = doc["functions"];
  // Sorted by the size of the self change: leaf_a -35, leaf_c +25, leaf_b +10.
  EXPECT_EQ(functions[0]["name"], "leaf_a");
  EXPECT_EQ(functions[1]["name"], "leaf_c");
  EXPECT_EQ(functions[2]["name"], "leaf_b");
  const auto& a = row(functions, "name", "leaf_a");
  EXPECT_DOUBLE_EQ(a["base_self_percent"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(a["new_self_percent"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(a["self_delta_points"].get<double>(), -35.0);
  EXPECT_EQ(a["base_self_samples"], 6);
  EXPECT_EQ(a["new_self_samples"], 2);
  EXPECT_DOUBLE_EQ(row(functions, "name", "leaf_b")["self_delta_points"].get<double>(), 10.0);
  const auto& c = row(functions, "name", "leaf_c");
  EXPECT_DOUBLE_EQ(c["base_self_percent"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(c["self_delta_points"].get<double>(), 25.0);
  const auto& mid = row(functions, "name", "mid");
  EXPECT_DOUBLE_EQ(mid["self_delta_points"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(mid["total_delta_points"].get<double>(), 25.0);
  const auto& main_row = row(functions, "name", "main");
  EXPECT_DOUBLE_EQ(main_row["base_total_percent"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(main_row["total_delta_points"].get<double>(), 0.0);

  ASSERT_EQ(doc["lock_sites"].size(), 1u);
  const auto& site = doc["lock_sites"][0];
  EXPECT_EQ(site["site"], "update");
  EXPECT_EQ(site["base"]["acquisitions"], 3);
  EXPECT_EQ(site["base"]["wait_p50_ns"], 200);
  EXPECT_EQ(site["base"]["wait_p99_ns"], 300);
  EXPECT_EQ(site["new"]["wait_p50_ns"], 500);
  EXPECT_EQ(site["new"]["hold_p99_ns"], 1000);
  EXPECT_EQ(site["wait_p50_delta_ns"], 300);
  EXPECT_EQ(site["wait_p99_delta_ns"], 300);
  EXPECT_EQ(site["hold_p50_delta_ns"], -1000);
  EXPECT_EQ(site["hold_p99_delta_ns"], -2000);

  EXPECT_EQ(doc["base"]["window_ns"], kEnd);
  ASSERT_EQ(doc["off_cpu_stacks"].size(), 1u);
  const auto& off = doc["off_cpu_stacks"][0];
  EXPECT_EQ(off["frames"], nlohmann::json({"main", "read_wait"}));
  EXPECT_EQ(off["base_ns"], 1'000'000);
  EXPECT_EQ(off["new_ns"], 3'000'000);
  EXPECT_EQ(off["delta_ns"], 2'000'000);
  // 1 ms blocked in 10 ms = 100 ms per second; 3 ms -> 300 ms/s.
  EXPECT_EQ(off["base_ns_per_s"], 100'000'000);
  EXPECT_EQ(off["delta_ns_per_s"], 200'000'000);

  // Same builder: same binaries, host, kernel, duration; only the sample count is low.
  ASSERT_EQ(doc["comparability"].size(), 1u);
  EXPECT_EQ(doc["comparability"][0]["kind"], "samples");
}

TEST(DiffReport, TextAndFlameGraph) {
  TraceBuilder base, next;
  build(base, 6, 4, 0, {100}, {1000}, 1'000'000);
  build(next, 2, 4, 2, {400}, {1000}, 3'000'000);
  auto base_path = base.write(), new_path = next.write();
  ASSERT_TRUE(base_path && new_path);
  DiffOptions options;
  options.base_path = *base_path;
  options.new_path = *new_path;
  options.trace.progress = false;
  options.flame_output = *base_path + ".diff.html";
  std::ostringstream out;
  ASSERT_EQ(runDiffReport(options, out), 0);
  std::string text = out.str();
  EXPECT_NE(text.find("comparability:"), std::string::npos);
  EXPECT_NE(text.find("-35.00"), std::string::npos) << text;
  EXPECT_NE(text.find("leaf_c"), std::string::npos);
  EXPECT_NE(text.find("update"), std::string::npos);
  std::ifstream html(options.flame_output);
  std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<title>leaf_a (base 60.00% -&gt; new 25.00%, -35.00 pp)</title>"),
            std::string::npos);
  std::remove(options.flame_output.c_str());
}

// The "same binaries" line only when build-ids say so; otherwise "cannot tell".
TEST(DiffReport, ComparabilityLineNeedsBuildIds) {
  DiffResult result;
  for (TraceFacts* f : {&result.base.facts, &result.next.facts}) {
    f->host = "h";
    f->kernel = "6.1";
    f->duration_ns = 1'000'000'000;
    f->sample_hz = 999;
    f->samples = 999;
  }
  auto text = [&] {
    result.comparability = assessComparability(result.base.facts, result.next.facts);
    std::ostringstream out;
    printDiff(result, DiffOptions{}, out);
    return out.str();
  };
  std::string without = text();
  EXPECT_EQ(without.find("same binaries"), std::string::npos) << without;
  EXPECT_NE(without.find("no build-ids in either trace: cannot tell"), std::string::npos)
      << without;
  result.base.facts.build_ids = result.next.facts.build_ids = {{"/usr/bin/app", "ab12"}};
  std::string with = text();
  EXPECT_NE(with.find("same binaries (build-ids match)"), std::string::npos) << with;
}

// Each side's shares are its own: what `incise top` says of that trace,
// in the diff's JSON and in the differential flame graph's frames (whose
// root-first path weights a search sums, so a search for a function covers
// exactly top's total % of it).
TEST(DiffReport, SharesEqualTopOnEachSide) {
  TraceBuilder base, next;
  build(base, 6, 3, 1, {}, {}, 1000);
  build(next, 2, 5, 9, {}, {}, 1000);
  auto base_path = base.write(), new_path = next.write();
  ASSERT_TRUE(base_path && new_path);
  nlohmann::json doc = diffDocument(*base_path, *new_path);
  for (const auto& [side, path] : {std::pair{"base", *base_path}, {"new", *new_path}}) {
    nlohmann::json top;
    ASSERT_EQ(testing::runReportJson(runTop, {path, "--limit", "0"}, top), 0);
    ASSERT_GT(top["rows"].size(), 3u);
    for (const auto& function : top["rows"]) {
      SCOPED_TRACE(std::string(side) + " " + function["name"].get<std::string>());
      const nlohmann::json& delta = row(doc["functions"], "name", function["name"]);
      ASSERT_FALSE(delta.is_null());
      EXPECT_EQ(delta[std::string(side) + "_total_percent"], function["total_percent"]);
      EXPECT_EQ(delta[std::string(side) + "_self_percent"], function["self_percent"]);
    }
  }

  char html[] = "/tmp/incise-diff-shares-XXXXXX.svg";
  int fd = mkstemps(html, 4);
  ASSERT_GE(fd, 0);
  close(fd);
  DiffOptions options;
  options.base_path = *base_path;
  options.new_path = *new_path;
  options.flame_output = html;
  options.trace.progress = false;
  std::ostringstream out;
  ASSERT_EQ(runDiffReport(options, out), 0);
  std::stringstream svg;
  svg << std::ifstream(html).rdbuf();
  std::remove(html);
  // leaf_c under mid: 1 of 10 base samples, 9 of 16 new ones.
  EXPECT_NE(svg.str().find("data-n=\"leaf_c\""), std::string::npos);
  EXPECT_NE(svg.str().find("data-b=\"1\" data-a=\"9\""), std::string::npos) << svg.str();
  EXPECT_NE(svg.str().find("data-base-total=\"10\" data-new-total=\"16\""), std::string::npos);
  EXPECT_NE(svg.str().find("<title>leaf_c (base 10.00% -&gt; new 56.25%, +46.25 pp)</title>"),
            std::string::npos);
}

// Latency per traced function and syscall, matched by name across traces
// whose probe ids differ: 100 calls of parse (1 ms each, the base) against
// 50 calls (the slowest ten 8 ms), and a syscall in the base only.
TEST(DiffReport, LatencyPercentilesAndRatesPerName) {
  TraceBuilder base, next;
  for (TraceBuilder* t : {&base, &next}) t->thread(101, "worker");
  base.latencyProbe(format::LatencySource::kFunction, 1, "parse");
  next.latencyProbe(format::LatencySource::kFunction, 7, "parse");
  base.latencyProbe(format::LatencySource::kSyscall, 35, "nanosleep");
  for (uint64_t i = 0; i < 100; ++i)
    base.latency(10'000 * i, 101, format::LatencySource::kFunction, 1, 1'000'000);
  for (uint64_t i = 0; i < 50; ++i)
    next.latency(10'000 * i, 101, format::LatencySource::kFunction, 7,
                 i < 40 ? 1'000'000 : 8'000'000);
  for (uint64_t i = 0; i < 4; ++i)
    base.latency(2'000'000 + i, 101, format::LatencySource::kSyscall, 35, 2'000'000);
  base.setEnd(kEnd);
  next.setEnd(2 * kEnd);
  auto base_path = base.write(), new_path = next.write();
  ASSERT_TRUE(base_path) << base_path.error().message();
  ASSERT_TRUE(new_path) << new_path.error().message();
  nlohmann::json doc = diffDocument(*base_path, *new_path);
  ASSERT_TRUE(doc.is_object());

  ASSERT_EQ(doc["latency_total"], 2u);
  // Sorted by the change of p99: parse (+7 ms) before nanosleep (-2 ms).
  const auto& parse = doc["latency"][0];
  EXPECT_EQ(parse["kind"], "function");
  EXPECT_EQ(parse["name"], "parse");
  EXPECT_EQ(parse["base"]["count"], 100);
  EXPECT_EQ(parse["new"]["count"], 50);
  // 100 calls in 10 ms and 50 in 20 ms: 10,000 and 2,500 calls per second.
  EXPECT_DOUBLE_EQ(parse["base"]["calls_per_s"].get<double>(), 10'000.0);
  EXPECT_DOUBLE_EQ(parse["new"]["calls_per_s"].get<double>(), 2'500.0);
  EXPECT_EQ(parse["base"]["p50_ns"], 1'000'000);
  EXPECT_EQ(parse["new"]["p50_ns"], 1'000'000);
  EXPECT_EQ(parse["new"]["p99_ns"], 8'000'000);
  EXPECT_EQ(parse["p99_delta_ns"], 7'000'000);
  EXPECT_EQ(parse["max_delta_ns"], 7'000'000);
  const auto& sleep = row(doc["latency"], "name", "nanosleep");
  EXPECT_EQ(sleep["kind"], "syscall");
  EXPECT_EQ(sleep["base"]["count"], 4);
  EXPECT_TRUE(sleep["new"].is_null());
  EXPECT_EQ(sleep["p99_delta_ns"], -2'000'000);

  // The text report has the section, and traces without latency rows do not.
  expectSectionOnlyWhereRows(*base_path, *new_path, "latency per traced function",
                             "1.000 ms -> 8.000 ms");
}

TEST(DiffReport, AllocationSitesPerSecondAndLiveBytes) {
  TraceBuilder base, next;
  for (TraceBuilder* t : {&base, &next}) t->thread(101, "worker");
  // parse allocates through operator new: the site is parse, on both sides.
  const uint64_t base_parse = base.stack({"operator new", "parse", "main"});
  const uint64_t new_parse = next.stack({"operator new", "parse", "main"});
  const uint64_t base_cache = base.stack({"malloc", "cache_put", "main"});
  const uint64_t new_cache = next.stack({"malloc", "cache_put", "main"});
  const uint64_t new_only = next.stack({"malloc", "spill", "main"});
  // base (10 ms): parse 4 samples of 64 KiB, all freed; cache_put 1 MiB live.
  for (uint64_t i = 0; i < 4; ++i) {
    base.allocation(1000 + i, 101, 0x1000 + 0x100 * i, 64, 65'536, base_parse);
    base.freed(2000 + i, 101, 0x1000 + 0x100 * i);
  }
  base.allocation(3000, 101, 0x9000, 1 << 20, 1 << 20, base_cache);
  base.setEnd(kEnd);
  // new (20 ms): parse 2 samples; cache_put 3 MiB live in 3 samples; spill
  // 128 KiB freed.
  for (uint64_t i = 0; i < 2; ++i) {
    next.allocation(1000 + i, 101, 0x1000 + 0x100 * i, 64, 65'536, new_parse);
    next.freed(2000 + i, 101, 0x1000 + 0x100 * i);
  }
  for (uint64_t i = 0; i < 3; ++i)
    next.allocation(3000 + i, 101, 0x9000 + 0x200000 * i, 1 << 20, 1 << 20, new_cache);
  next.allocation(5000, 101, 0x20000, 4096, 131'072, new_only);
  next.freed(6000, 101, 0x20000);
  next.setEnd(2 * kEnd);
  auto base_path = base.write(), new_path = next.write();
  ASSERT_TRUE(base_path) << base_path.error().message();
  ASSERT_TRUE(new_path) << new_path.error().message();
  nlohmann::json doc = diffDocument(*base_path, *new_path);
  ASSERT_TRUE(doc.is_object());

  ASSERT_EQ(doc["alloc_sites_total"], 3u);
  // cache_put: live +2 MiB, and 100 MiB/s -> 150 MiB/s: the largest change first.
  const auto& cache = doc["alloc_sites"][0];
  EXPECT_EQ(cache["site"], "cache_put");
  EXPECT_EQ(cache["stack"], nlohmann::json({"main", "cache_put", "malloc"}));
  EXPECT_EQ(cache["base"]["live_bytes"], 1 << 20);
  EXPECT_EQ(cache["new"]["live_bytes"], 3 << 20);
  EXPECT_EQ(cache["live_bytes_delta"], 2 << 20);
  EXPECT_EQ(cache["base"]["allocated_bytes_per_s"], 100 * (1 << 20));
  EXPECT_EQ(cache["new"]["allocated_bytes_per_s"], 150 * (1 << 20));
  EXPECT_EQ(cache["allocated_bytes_per_s_delta"], 50 * (1 << 20));
  // parse: 256 KiB in 10 ms and 128 KiB in 20 ms, 4,096 blocks of 64 bytes
  // and 2,048; nothing live.
  const auto& parse = row(doc["alloc_sites"], "site", "parse");
  EXPECT_EQ(parse["base"]["allocated_bytes"], 262'144);
  EXPECT_EQ(parse["new"]["allocated_bytes"], 131'072);
  EXPECT_EQ(parse["base"]["count"], 4'096);
  EXPECT_EQ(parse["new"]["count"], 2'048);
  EXPECT_EQ(parse["allocated_bytes_per_s_delta"], 6'553'600 - 26'214'400);
  EXPECT_EQ(parse["live_bytes_delta"], 0);
  const auto& spill = row(doc["alloc_sites"], "site", "spill");
  EXPECT_TRUE(spill["base"].is_null());
  EXPECT_EQ(spill["new"]["allocated_bytes"], 131'072);
  EXPECT_EQ(spill["new"]["count"], 32);

  // The text report has the section; traces without allocations do not.
  expectSectionOnlyWhereRows(*base_path, *new_path, "allocations per site", "+2.0 MiB");

  // --flame alloc: the graph weighs bytes allocated. cache_put had 1 of
  // 1.25 MiB in base and 3 of 3.25 MiB in new.
  DiffOptions options;
  options.base_path = *base_path;
  options.new_path = *new_path;
  options.trace.progress = false;
  options.flame = DiffFlameWeighting::kAllocated;
  options.flame_output = *base_path + ".alloc.html";
  std::ostringstream out;
  ASSERT_EQ(runDiffReport(options, out), 0) << out.str();
  std::ifstream html(options.flame_output);
  std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<title>cache_put (base 80.00% -&gt; new 92.31%, +12.31 pp)</title>"),
            std::string::npos)
      << page.substr(0, 4000);
  std::remove(options.flame_output.c_str());
  // Traces without sampled allocations have none to draw: an error, no file.
  TraceBuilder plain;
  build(plain, 1, 1, 0, {100}, {100}, 1'000);
  auto plain_path = plain.write();
  ASSERT_TRUE(plain_path) << plain_path.error().message();
  options.base_path = options.new_path = *plain_path;
  options.flame = DiffFlameWeighting::kLive;
  std::ostringstream none;
  EXPECT_EQ(runDiffReport(options, none), 1);
  EXPECT_FALSE(std::ifstream(options.flame_output).good());
}

TEST(DiffReport, MissingTraceIsAnError) {
  DiffOptions options;
  options.base_path = "/nonexistent/base.trace";
  options.new_path = "/nonexistent/new.trace";
  std::ostringstream out;
  EXPECT_EQ(runDiffReport(options, out), 1);
}

}  // namespace
}  // namespace incise::analyzer
