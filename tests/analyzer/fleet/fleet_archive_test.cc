// The fleet archive against a real ClickHouse server (started by the ctest
// fixture, see CMakeLists.txt; INCISE_CLICKHOUSE_URL names it): the SQL diff
// equals the local `incise diff` of the same traces, pushes are idempotent
// and invisible until complete, init is idempotent, a server that is down
// fails a push cleanly. Each test works in its own database, dropped after.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "analyzer/archive/trace_id.h"
#include "analyzer/diff/profile_diff.h"
#include "analyzer/diff/trace_profile.h"
#include "analyzer/fleet/clickhouse_client.h"
#include "analyzer/fleet/fleet_push.h"
#include "analyzer/fleet/fleet_queries.h"
#include "analyzer/fleet/fleet_schema.h"
#include "analyzer/fleet/fleet_trace_rows.h"
#include "analyzer/model/trace.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {
int runArchive(const std::vector<std::string>& args);

namespace {

using testing::TraceBuilder;

class FleetArchive : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* url = std::getenv("INCISE_CLICKHOUSE_URL");
    const char* ci = std::getenv("CI");
    bool in_ci = ci && std::string(ci) == "true";
    std::string reason;
    if (!url) {
      reason =
          "INCISE_CLICKHOUSE_URL is not set (run through ctest, whose fixture starts "
          "tools/clickhouse)";
    } else {
      client_ = std::make_unique<ClickHouseClient>(url, ClickHouseTimeouts{2, 60});
      if (auto ping = client_->query("SELECT 1"); !ping) {
        reason = "no ClickHouse server: " + ping.error().message() +
                 " (is clickhouse-server installed? tools/setup installs it)";
      }
    }
    if (!reason.empty()) {
      if (in_ci) FAIL() << reason << " — CI=true, so this is a failure";
      GTEST_SKIP() << reason;
    }
    url_ = url;
    database_ = "incise_test_" + std::to_string(getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_TRUE(client_->query("DROP DATABASE IF EXISTS " + database_));
    Status ready = initFleetSchema(*client_, database_);
    ASSERT_TRUE(ready) << ready.message();
  }

  void TearDown() override {
    if (client_ && !database_.empty()) (void)client_->query("DROP DATABASE IF EXISTS " + database_);
  }

  uint64_t count(const std::string& sql) {
    auto answer = client_->query(sql);
    EXPECT_TRUE(answer) << answer.error().message();
    return answer ? std::stoull("0" + *answer) : 0;
  }

  std::map<std::string, uint64_t> rowCounts() {
    std::map<std::string, uint64_t> counts;
    for (const char* table : {"frames", "stacks", "samples", "lock_intervals", "lock_site_times",
                              "latency_times", "off_cpu", "alloc_sites", "traces"}) {
      counts[table] = count("SELECT count() FROM " + database_ + "." + table);
    }
    return counts;
  }

  Result<PushResult> push(const std::string& path, std::map<std::string, std::string> tags) {
    PushOptions options;
    options.database = database_;
    options.tags = std::move(tags);
    options.progress = false;
    options.batch_rows = 3;  // several batches even for small traces
    return pushTrace(*client_, path, options);
  }

  FlatProfile fleetProfile(const std::string& selector_text,
                           const std::vector<std::string>& where_texts = {}) {
    auto selector = parseSelector(selector_text);
    EXPECT_TRUE(selector);
    std::vector<ContextCondition> where;
    for (const std::string& text : where_texts) where.push_back(*Filter::parseWhere(text));
    auto matched = queryMatchedTraces(*client_, database_, *selector, where);
    EXPECT_TRUE(matched) << matched.error().message();
    if (!matched) return {};
    auto profile = queryFunctionProfile(*client_, database_, *selector, *matched, where);
    EXPECT_TRUE(profile) << profile.error().message();
    return profile ? profile.take() : FlatProfile{};
  }

  // `incise archive diff --json --limit 0` of two selectors, parsed; not an
  // object when the command fails.
  nlohmann::json archiveDiffJson(const std::string& base, const std::string& next) {
    ::testing::internal::CaptureStdout();
    int exit = runArchive({"diff", "--clickhouse", url_, "--database", database_, "--base", base,
                           "--new", next, "--json", "--limit", "0"});
    std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(exit, 0) << out;
    return exit == 0 ? nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false)
                     : nlohmann::json();
  }

  std::unique_ptr<ClickHouseClient> client_;
  std::string url_;
  std::string database_;
};

// Samples spread over 3 seconds and two threads; the recursion in `walk`
// checks total counts a name once per stack. A lock, an off-CPU span, a
// timed call and a sampled allocation so every table gets rows.
void build(TraceBuilder& t, int a, int b, int c, int recursive, uint64_t blocked_ns = 1'000'000) {
  t.thread(101, "worker");
  t.thread(102, "helper");
  uint64_t sa = t.stack({"leaf_a", "main"}), sb = t.stack({"leaf_b", "main"});
  uint64_t sc = t.stack({"leaf_c", "mid", "main"});
  uint64_t sr = t.stack({"walk", "walk", "walk", "main"});
  uint64_t time = 1000;
  const uint64_t step = 3'000'000'000 / static_cast<uint64_t>(a + b + c + recursive + 1);
  auto add = [&](int n, uint64_t stack) {
    for (int i = 0; i < n; ++i) t.sample(time += step, i % 2 ? 101 : 102, stack);
  };
  add(a, sa);
  add(b, sb);
  add(c, sc);
  add(recursive, sr);
  uint64_t site = t.stack({"update", "main"});
  t.lock(101, 0x7000, 100'000, 150'000, 400'000, site);
  uint64_t off = t.stack({"read_wait", "main"});
  t.sched(1'000'000, 0, 101, /*state=*/1, 0, off);
  t.sched(1'000'000 + blocked_ns, 0, 0, 0, 101);
  t.latencyProbe(format::LatencySource::kFunction, 1, "parse");
  t.latency(2'000'000, 101, format::LatencySource::kFunction, 1, 40'000);
  t.allocation(2'500'000, 101, 0x5000, 256, 65'536, t.stack({"malloc", "parse", "main"}));
}

TraceProfile localProfile(const std::string& path) {
  TraceOptions options;
  options.progress = false;
  auto trace = Trace::open(path, options);
  EXPECT_TRUE(trace) << trace.error().message();
  return collectTraceProfile(**trace);
}

TEST_F(FleetArchive, InitTwiceIsFine) {
  Status again = initFleetSchema(*client_, database_);
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(count("SELECT count() FROM " + database_ + ".schema_version"), 1u);
  EXPECT_TRUE(checkFleetSchema(*client_, database_));
  // The command says so too, and exits 0.
  ::testing::internal::CaptureStdout();
  int exit = runArchive({"init", "--clickhouse", url_, "--database", database_});
  std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(exit, 0);
  EXPECT_NE(out.find("schema version " + std::to_string(kFleetSchemaVersion)), std::string::npos)
      << out;
}

TEST_F(FleetArchive, SqlDiffEqualsLocalDiff) {
  TraceBuilder base, next;
  build(base, 6, 4, 0, 2);
  build(next, 2, 4, 3, 5, 3'000'000);
  auto base_path = base.write(), new_path = next.write();
  ASSERT_TRUE(base_path) << base_path.error().message();
  ASSERT_TRUE(new_path) << new_path.error().message();
  auto pushed_base = push(*base_path, {{"build", "v1"}});
  ASSERT_TRUE(pushed_base) << pushed_base.error().message();
  auto pushed_new = push(*new_path, {{"build", "v2"}});
  ASSERT_TRUE(pushed_new) << pushed_new.error().message();

  std::vector<FunctionDelta> local =
      diffFunctions(localProfile(*base_path).functions, localProfile(*new_path).functions);
  std::vector<FunctionDelta> fleet =
      diffFunctions(fleetProfile("build=v1"), fleetProfile("build=v2"));
  ASSERT_FALSE(local.empty());
  ASSERT_EQ(fleet.size(), local.size());
  std::map<std::string, const FunctionDelta*> by_name;
  for (const FunctionDelta& f : fleet) by_name[f.name] = &f;
  for (const FunctionDelta& l : local) {
    ASSERT_TRUE(by_name.count(l.name)) << l.name << " is missing from the SQL diff";
    const FunctionDelta& f = *by_name[l.name];
    EXPECT_NEAR(f.selfDelta(), l.selfDelta(), 1e-6) << l.name;
    EXPECT_NEAR(f.totalDelta(), l.totalDelta(), 1e-6) << l.name;
    EXPECT_EQ(f.base_self, l.base_self) << l.name;
    EXPECT_EQ(f.new_total, l.new_total) << l.name;
  }
  // Off-CPU blocked time per stack, per second of trace: as the local diff.
  TraceProfile local_base = localProfile(*base_path), local_new = localProfile(*new_path);
  std::vector<OffCpuDelta> local_off =
      diffOffCpu(local_base.off_cpu, local_base.window_ns, local_new.off_cpu, local_new.window_ns);
  auto v1 = parseSelector("build=v1"), v2 = parseSelector("build=v2");
  auto m1 = queryMatchedTraces(*client_, database_, *v1);
  auto m2 = queryMatchedTraces(*client_, database_, *v2);
  ASSERT_TRUE(m1 && m2);
  auto off1 = queryOffCpuProfile(*client_, database_, *v1, *m1);
  auto off2 = queryOffCpuProfile(*client_, database_, *v2, *m2);
  ASSERT_TRUE(off1) << off1.error().message();
  ASSERT_TRUE(off2) << off2.error().message();
  std::vector<OffCpuDelta> fleet_off = diffFleetOffCpu(*off1, *off2);
  ASSERT_FALSE(local_off.empty());
  ASSERT_EQ(fleet_off.size(), local_off.size());
  for (size_t i = 0; i < local_off.size(); ++i) {
    EXPECT_EQ(fleet_off[i].root_first, local_off[i].root_first);
    EXPECT_EQ(fleet_off[i].base_ns, local_off[i].base_ns);
    EXPECT_EQ(fleet_off[i].new_ns, local_off[i].new_ns);
    EXPECT_NEAR(fleet_off[i].perSecondDelta(), local_off[i].perSecondDelta(),
                1e-6 * std::abs(local_off[i].perSecondDelta()) + 1e-3);
  }

  // `walk` recurses: counted once per stack in total (5 of 14 samples in new).
  EXPECT_NEAR(by_name["walk"]->new_total_percent, 100.0 * 5 / 14, 1e-6);

  // The command prints the same through --json, selected by tag.
  nlohmann::json doc = archiveDiffJson("build=v1", "build=v2");
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["functions"].size(), local.size());
  EXPECT_EQ(doc["functions"][0]["name"], local[0].name);
  EXPECT_EQ(doc["base"]["traces"], 1);
}

// Locks of every kind the local lock-site figures handle: a site behind a
// libc frame (the site is the first frame outside it), an even count of
// waits (nearest rank, not interpolation), try-failed, recursive and
// unreleased rows (no wait or no hold), and in `contended_mode` futex waits
// whose holders' sections are inferred from the wakes.
void buildLocks(TraceBuilder& t, uint64_t scale, bool contended_mode) {
  t.thread(101, "worker");
  t.thread(102, "helper");
  t.function("pthread_mutex_lock", "libc.so.6");
  uint64_t update = t.stack({"pthread_mutex_lock", "update", "main"});
  uint64_t flush = t.stack({"flush", "worker_main"});
  uint64_t rebalance = t.stack({"pthread_mutex_lock", "rebalance", "main"});
  uint64_t time = 1'000'000;
  const uint64_t waits[] = {10'000, 40'000, 20'000, 90'000};
  for (uint64_t wait : waits) {
    uint64_t hold = wait * scale / 2 + 5'000;
    t.lock(101, 0x7000, time, time + wait * scale, time + wait * scale + hold, update,
           format::kLockContended);
    time += 1'000'000;
  }
  t.lock(102, 0x7100, time, time + 3'000, time + 8'000, flush);
  t.lock(102, 0x7100, time + 9'000, time + 9'000, 0, flush, format::kLockTryFailed);
  t.lock(102, 0x7100, time + 10'000, time + 11'000, 0, flush);  // release not seen
  t.lock(102, 0x7100, time + 12'000, time + 12'500, time + 13'000, flush, format::kLockRecursive);
  time += 1'000'000;
  if (!contended_mode) return;
  for (int i = 0; i < 3; ++i) {
    // 102 acquired (uncontended, unseen), 101 waits until 102 wakes it.
    t.lock(101, 0x7200, time, time + 50'000 * (i + 1), 0, rebalance, format::kLockContendedOnly,
           102);
    t.lock(102, 0x7200, time + 60'000 * (i + 1), time + 60'000 * (i + 1) + 7'000, 0, rebalance,
           format::kLockContendedOnly, 101);
    time += 1'000'000;
  }
}

TEST_F(FleetArchive, SqlLockSitesEqualLocalDiff) {
  TraceBuilder base, next;
  build(base, 2, 2, 0, 0);
  build(next, 2, 2, 0, 0);
  buildLocks(base, 1, false);
  buildLocks(next, 3, true);
  auto base_path = base.write(), new_path = next.write();
  ASSERT_TRUE(base_path && new_path);
  ASSERT_TRUE(push(*base_path, {{"build", "l1"}}));
  ASSERT_TRUE(push(*new_path, {{"build", "l2"}}));

  std::vector<LockSiteDelta> local =
      diffLockSites(localProfile(*base_path).lock_sites, localProfile(*new_path).lock_sites);
  auto l1 = parseSelector("build=l1"), l2 = parseSelector("build=l2");
  auto base_sites = queryLockSites(*client_, database_, *l1);
  auto new_sites = queryLockSites(*client_, database_, *l2);
  ASSERT_TRUE(base_sites) << base_sites.error().message();
  ASSERT_TRUE(new_sites) << new_sites.error().message();
  std::vector<LockSiteDelta> fleet = diffLockSites(*base_sites, *new_sites);

  // The cases are there: update (behind libc), flush, rebalance only in new,
  // with inferred holds.
  std::map<std::string, const LockSiteDelta*> local_by_site;
  for (const LockSiteDelta& l : local) local_by_site[l.site] = &l;
  ASSERT_TRUE(local_by_site.count("update") && local_by_site.count("flush") &&
              local_by_site.count("rebalance"));
  EXPECT_TRUE(local_by_site["rebalance"]->next.hold_inferred);
  EXPECT_FALSE(local_by_site["rebalance"]->in_base);
  EXPECT_GT(local_by_site["rebalance"]->next.hold.p99, 0u);

  ASSERT_EQ(fleet.size(), local.size());
  for (size_t i = 0; i < local.size(); ++i) {
    const LockSiteDelta &l = local[i], &f = fleet[i];
    EXPECT_EQ(f.site, l.site);
    EXPECT_EQ(f.context, l.context) << l.site;
    EXPECT_EQ(f.in_base, l.in_base) << l.site;
    EXPECT_EQ(f.in_new, l.in_new) << l.site;
    for (auto [fs, ls] : {std::pair{&f.base, &l.base}, std::pair{&f.next, &l.next}}) {
      EXPECT_EQ(fs->acquisitions, ls->acquisitions) << l.site;
      EXPECT_EQ(fs->wait.p50, ls->wait.p50) << l.site;
      EXPECT_EQ(fs->wait.p99, ls->wait.p99) << l.site;
      EXPECT_EQ(fs->wait.count, ls->wait.count) << l.site;
      EXPECT_EQ(fs->hold.p50, ls->hold.p50) << l.site;
      EXPECT_EQ(fs->hold.p99, ls->hold.p99) << l.site;
      EXPECT_EQ(fs->hold.count, ls->hold.count) << l.site;
      EXPECT_EQ(fs->hold.max, ls->hold.max) << l.site;
      EXPECT_EQ(fs->hold_inferred, ls->hold_inferred) << l.site;
    }
  }

  // The command's --json rows carry the keys and values of `incise diff --json`.
  nlohmann::json doc = archiveDiffJson("build=l1", "build=l2");
  ASSERT_TRUE(doc.is_object());
  ASSERT_EQ(doc["lock_sites"].size(), local.size());
  EXPECT_EQ(doc["lock_sites"][0]["site"], local[0].site);
  EXPECT_EQ(doc["lock_sites"][0]["wait_p99_delta_ns"], local[0].waitP99Delta());
  EXPECT_TRUE(doc["lock_sites"][0]["new"].contains("hold_inferred"));
}

TEST_F(FleetArchive, InitUpgradesSchemaVersion1) {
  // A version-1 archive: no lock_site_times nor latency_times, version 1 recorded.
  ASSERT_TRUE(client_->query("DROP TABLE " + database_ + ".lock_site_times"));
  ASSERT_TRUE(client_->query("DROP TABLE " + database_ + ".latency_times"));
  ASSERT_TRUE(client_->query("DROP TABLE " + database_ + ".schema_version"));
  ASSERT_TRUE(client_->query(fleetSchemaStatements(database_)[1]));
  ASSERT_TRUE(client_->query("INSERT INTO " + database_ + ".schema_version VALUES (1, now())"));
  Status old = checkFleetSchema(*client_, database_);
  EXPECT_FALSE(old);
  EXPECT_NE(old.message().find("archive init"), std::string::npos) << old.message();
  Status upgraded = initFleetSchema(*client_, database_);
  ASSERT_TRUE(upgraded) << upgraded.message();
  EXPECT_TRUE(checkFleetSchema(*client_, database_));
  EXPECT_EQ(count("SELECT count() FROM " + database_ + ".lock_site_times"), 0u);
  EXPECT_EQ(count("SELECT count() FROM " + database_ + ".latency_times"), 0u);
  EXPECT_EQ(count("SELECT max(version) FROM " + database_ + ".schema_version"),
            kFleetSchemaVersion);
}

// Latency per name: the SQL diff of one trace per side is `incise diff`'s,
// for calls timed one by one (parse: its probe numbered differently in the
// two traces), a syscall in the base only, and a function counted in BPF in
// the new trace (hash: log2 buckets, percentiles at bucket bounds) but timed
// call by call in the base.
void buildLatency(TraceBuilder& t, bool is_new) {
  using format::LatencySource;
  t.thread(101, "worker");
  uint64_t parse = is_new ? 7 : 1;
  t.latencyProbe(LatencySource::kFunction, parse, "parse");
  t.latencyProbe(LatencySource::kFunction, 3, "hash");
  for (uint64_t i = 0; i < (is_new ? 50 : 100); ++i) {
    uint64_t ns = 1'000'000 + (i * 7'919) % 50'000 + (is_new && i % 10 == 0 ? 8'000'000 : 0);
    t.latency(10'000 * i, 101, LatencySource::kFunction, parse, ns);
  }
  if (is_new) {
    t.latencyBucket(0, 5'000'000, TraceBuilder::kPid, LatencySource::kFunction, 3, 10, 300,
                    300 * 1'500, 2'000);
    t.latencyBucket(0, 5'000'000, TraceBuilder::kPid, LatencySource::kFunction, 3, 14, 4,
                    4 * 20'000, 30'000);
  } else {
    t.latencyProbe(LatencySource::kSyscall, 35, "nanosleep");
    for (uint64_t i = 0; i < 4; ++i)
      t.latency(2'000'000 + i, 101, LatencySource::kSyscall, 35, 2'000'000 + 1'000 * i);
    for (uint64_t i = 0; i < 20; ++i)
      t.latency(3'000'000 + i, 101, LatencySource::kFunction, 3, 1'000 + 100 * i);
  }
}

TEST_F(FleetArchive, SqlLatencyEqualsLocalDiff) {
  TraceBuilder base, next;
  buildLatency(base, false);
  buildLatency(next, true);
  base.setEnd(20'000'000);
  next.setEnd(40'000'000);
  auto base_path = base.write(), new_path = next.write();
  ASSERT_TRUE(base_path && new_path);
  ASSERT_TRUE(push(*base_path, {{"build", "t1"}}));
  ASSERT_TRUE(push(*new_path, {{"build", "t2"}}));

  TraceProfile local_base = localProfile(*base_path), local_new = localProfile(*new_path);
  std::vector<LatencyDelta> local =
      diffLatency(local_base.latency, local_base.window_ns, local_new.latency, local_new.window_ns);
  auto t1 = parseSelector("build=t1"), t2 = parseSelector("build=t2");
  auto base_rows = queryLatency(*client_, database_, *t1);
  auto new_rows = queryLatency(*client_, database_, *t2);
  ASSERT_TRUE(base_rows) << base_rows.error().message();
  ASSERT_TRUE(new_rows) << new_rows.error().message();
  EXPECT_EQ(base_rows->window_ns, local_base.window_ns);
  std::vector<LatencyDelta> fleet =
      diffLatency(base_rows->rows, base_rows->window_ns, new_rows->rows, new_rows->window_ns);

  std::map<std::string, const LatencyDelta*> local_by_name;
  for (const LatencyDelta& l : local) local_by_name[l.name] = &l;
  ASSERT_TRUE(local_by_name.count("parse") && local_by_name.count("hash") &&
              local_by_name.count("nanosleep"));
  EXPECT_TRUE(local_by_name["hash"]->next.from_buckets);
  EXPECT_FALSE(local_by_name["hash"]->base.from_buckets);
  EXPECT_EQ(local_by_name["hash"]->next.count, 304u);
  EXPECT_FALSE(local_by_name["nanosleep"]->in_new);

  ASSERT_EQ(fleet.size(), local.size());
  for (size_t i = 0; i < local.size(); ++i) {
    const LatencyDelta &l = local[i], &f = fleet[i];
    EXPECT_EQ(f.kind, l.kind);
    EXPECT_EQ(f.name, l.name);
    EXPECT_EQ(f.in_base, l.in_base) << l.name;
    EXPECT_EQ(f.in_new, l.in_new) << l.name;
    EXPECT_DOUBLE_EQ(f.base_calls_per_s, l.base_calls_per_s) << l.name;
    EXPECT_DOUBLE_EQ(f.new_calls_per_s, l.new_calls_per_s) << l.name;
    for (auto [fs, ls] : {std::pair{&f.base, &l.base}, std::pair{&f.next, &l.next}}) {
      EXPECT_EQ(fs->count, ls->count) << l.name;
      EXPECT_EQ(fs->total_ns, ls->total_ns) << l.name;
      EXPECT_EQ(fs->p50_ns, ls->p50_ns) << l.name;
      EXPECT_EQ(fs->p99_ns, ls->p99_ns) << l.name;
      EXPECT_EQ(fs->max_ns, ls->max_ns) << l.name;
      EXPECT_EQ(fs->from_buckets, ls->from_buckets) << l.name;
    }
  }

  // Two traces on a side pool: calls add up, and so do the windows.
  TraceBuilder again;
  buildLatency(again, false);
  again.setEnd(30'000'000);
  auto again_path = again.write();
  ASSERT_TRUE(again_path);
  ASSERT_TRUE(push(*again_path, {{"build", "t1"}}));
  auto pooled = queryLatency(*client_, database_, *t1);
  ASSERT_TRUE(pooled) << pooled.error().message();
  EXPECT_EQ(pooled->window_ns, local_base.window_ns + 30'000'000u);
  for (const LatencySummary& row : pooled->rows) {
    if (row.name == "parse") {
      EXPECT_EQ(row.count, 200u);
    }
  }

  // The command's --json carries the section with `incise diff --json`'s keys.
  nlohmann::json doc = archiveDiffJson("build=t1", "build=t2");
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["latency_total"], local.size());
  EXPECT_EQ(doc["latency"][0].count("p99_delta_ns"), 1u) << doc["latency"][0].dump();
}

// Allocation sites: base has parse (freed) and cache_put (live); new has
// cache_put grown and spill; `more` is a second base-side trace.
void buildAllocations(TraceBuilder& t, bool is_new, uint64_t parse_samples) {
  t.thread(101, "worker");
  const uint64_t parse = t.stack({"operator new", "parse", "main"});
  const uint64_t cache = t.stack({"malloc", "cache_put", "main"});
  for (uint64_t i = 0; i < parse_samples; ++i) {
    t.allocation(1000 + i, 101, 0x1000 + 0x100 * i, 48, 65'536, parse);
    t.freed(50'000 + i, 101, 0x1000 + 0x100 * i);
  }
  for (uint64_t i = 0; i < (is_new ? 3u : 1u); ++i)
    t.allocation(100'000 + i, 101, 0x90000 + 0x1000 * i, 4096, 262'144, cache);
  if (is_new)
    t.allocation(200'000, 101, 0x30000, 100, 131'072, t.stack({"malloc", "spill", "main"}));
}

TEST_F(FleetArchive, SqlAllocSitesEqualLocalDiff) {
  TraceBuilder base, next;
  buildAllocations(base, false, 5);
  buildAllocations(next, true, 2);
  base.setEnd(10'000'000);
  next.setEnd(20'000'000);
  auto base_path = base.write(), new_path = next.write();
  ASSERT_TRUE(base_path && new_path);
  ASSERT_TRUE(push(*base_path, {{"build", "t1"}}));
  ASSERT_TRUE(push(*new_path, {{"build", "t2"}}));

  TraceProfile local_base = localProfile(*base_path), local_new = localProfile(*new_path);
  std::vector<AllocSiteDelta> local = diffAllocSites(local_base.alloc_sites, local_base.window_ns,
                                                     local_new.alloc_sites, local_new.window_ns);
  auto t1 = parseSelector("build=t1"), t2 = parseSelector("build=t2");
  auto base_rows = queryAllocSites(*client_, database_, *t1);
  auto new_rows = queryAllocSites(*client_, database_, *t2);
  ASSERT_TRUE(base_rows) << base_rows.error().message();
  ASSERT_TRUE(new_rows) << new_rows.error().message();
  std::vector<AllocSiteDelta> fleet =
      diffAllocSites(base_rows->rows, base_rows->window_ns, new_rows->rows, new_rows->window_ns);
  ASSERT_EQ(local.size(), 3u);
  ASSERT_EQ(fleet.size(), local.size());
  for (size_t i = 0; i < local.size(); ++i) {
    const AllocSiteDelta &l = local[i], &f = fleet[i];
    EXPECT_EQ(f.site, l.site);
    EXPECT_EQ(f.root_first, l.root_first) << l.site;
    EXPECT_EQ(f.in_base, l.in_base) << l.site;
    EXPECT_EQ(f.in_new, l.in_new) << l.site;
    EXPECT_DOUBLE_EQ(f.base_bytes_per_s, l.base_bytes_per_s) << l.site;
    EXPECT_DOUBLE_EQ(f.new_bytes_per_s, l.new_bytes_per_s) << l.site;
    for (auto [fs, ls] : {std::pair{&f.base, &l.base}, std::pair{&f.next, &l.next}}) {
      EXPECT_EQ(fs->allocated_bytes, ls->allocated_bytes) << l.site;
      EXPECT_EQ(fs->allocations(), ls->allocations()) << l.site;
      EXPECT_EQ(fs->live_bytes, ls->live_bytes) << l.site;
      EXPECT_EQ(fs->liveAllocations(), ls->liveAllocations()) << l.site;
      EXPECT_EQ(fs->samples, ls->samples) << l.site;
    }
  }
  // parse: 32.8 MB/s -> 6.6 MB/s, the largest change; cache_put: +512 KiB live.
  EXPECT_EQ(local[0].site, "parse");
  EXPECT_DOUBLE_EQ(local[0].allocatedPerSecondDelta(), 2 * 65'536 / 0.02 - 5 * 65'536 / 0.01);
  EXPECT_EQ(local[1].site, "cache_put");
  EXPECT_EQ(local[1].liveDelta(), 2 * 262'144);

  // Two traces on a side add up, and so do their windows.
  TraceBuilder more;
  buildAllocations(more, false, 3);
  more.setEnd(30'000'000);
  auto more_path = more.write();
  ASSERT_TRUE(more_path);
  ASSERT_TRUE(push(*more_path, {{"build", "t1"}}));
  auto pooled = queryAllocSites(*client_, database_, *t1);
  ASSERT_TRUE(pooled) << pooled.error().message();
  EXPECT_EQ(pooled->window_ns, local_base.window_ns + 30'000'000u);
  ASSERT_EQ(pooled->rows.size(), 2u);
  EXPECT_EQ(pooled->rows[1].site, "parse");  // by name
  EXPECT_EQ(pooled->rows[1].totals.allocated_bytes, 8u * 65'536);
  EXPECT_EQ(pooled->rows[0].totals.live_bytes, 2u * 262'144);

  // The command's --json carries the section with `incise diff --json`'s keys.
  nlohmann::json doc = archiveDiffJson("build=t1", "build=t2");
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["alloc_sites_total"], 3u);
  EXPECT_EQ(doc["alloc_sites"][0].count("live_bytes_delta"), 1u) << doc["alloc_sites"][0].dump();
}

TEST_F(FleetArchive, TopAveragesSharesPerTrace) {
  // Two traces of one build, of different lengths: each counts the same.
  TraceBuilder small, large;
  build(small, 1, 1, 0, 0);   // leaf_a 50%
  build(large, 0, 10, 0, 0);  // leaf_a 0%
  auto small_path = small.write(), large_path = large.write();
  ASSERT_TRUE(small_path && large_path);
  ASSERT_TRUE(push(*small_path, {{"build", "v3"}, {"site", "eu1"}}));
  ASSERT_TRUE(push(*large_path, {{"build", "v3"}}));
  FlatProfile profile = fleetProfile("build=v3");
  std::map<std::string, FlatProfileRow> rows;
  for (const auto& row : profile.rows) rows[row.name] = row;
  EXPECT_NEAR(rows["leaf_a"].self_percent, 25.0, 1e-6);  // (50 + 0) / 2
  EXPECT_NEAR(rows["leaf_b"].self_percent, 75.0, 1e-6);  // (50 + 100) / 2
  EXPECT_EQ(rows["leaf_b"].self, 11u);
  EXPECT_EQ(profile.weight, 12u);
  // Selectors narrow: a tag that only one trace carries.
  FlatProfile one = fleetProfile("build=v3,site=eu1");
  EXPECT_EQ(one.weight, 2u);
}

// Two traces of one build with a context `req`: thread 101 holds 7 over its
// leaf_a samples and 8 over its leaf_b ones; thread 102 never reads it. The
// local `top --where` counts are the answers.
TEST_F(FleetArchive, TopWhereKeepsTheSamplesOfThreadsHoldingTheValues) {
  auto traceWith = [](TraceBuilder& t, int a, int b) {
    t.thread(101, "worker");
    t.thread(102, "other");
    t.context("req", "request_id");
    uint64_t sa = t.stack({"leaf_a", "main"}), sb = t.stack({"leaf_b", "main"});
    uint64_t time = 1'000'000;
    t.contextChange(time, 101, 0, 7);
    for (int i = 0; i < a; ++i) t.sample(time += 400'000'000, 101, sa);
    t.contextChange(time + 2, 101, 0, 8, /*since=*/time);
    time += 2;
    for (int i = 0; i < b; ++i) t.sample(time += 400'000'000, 101, sb);
    for (int i = 0; i < 3; ++i) t.sample(time += 1000, 102, sa);
    t.setEnd(time + 1000);
  };
  TraceBuilder first, second;
  traceWith(first, 2, 1);   // req=7: leaf_a 2 of 2; req=8: leaf_b 1 of 1
  traceWith(second, 1, 3);  // req=7: leaf_a 1 of 1; req=8: leaf_b 3 of 3
  auto first_path = first.write(), second_path = second.write();
  ASSERT_TRUE(first_path && second_path);
  ASSERT_TRUE(push(*first_path, {{"build", "ctx"}}));
  ASSERT_TRUE(push(*second_path, {{"build", "ctx"}}));
  auto rowsOf = [](const FlatProfile& profile) {
    std::map<std::string, FlatProfileRow> rows;
    for (const auto& row : profile.rows) rows[row.name] = row;
    return rows;
  };
  FlatProfile seven = fleetProfile("build=ctx", {"req=7"});
  EXPECT_EQ(seven.weight, 3u);
  auto rows = rowsOf(seven);
  EXPECT_EQ(rows.count("leaf_b"), 0u);
  EXPECT_EQ(rows["leaf_a"].self, 3u);
  EXPECT_NEAR(rows["leaf_a"].self_percent, 100.0, 1e-6);
  FlatProfile both = fleetProfile("build=ctx", {"req=7,8"});
  EXPECT_EQ(both.weight, 7u);
  rows = rowsOf(both);
  EXPECT_NEAR(rows["leaf_a"].self_percent, (2.0 / 3 + 1.0 / 4) * 100 / 2, 1e-6);
  // Thread 102's value is unknown: in neither form.
  EXPECT_EQ(fleetProfile("build=ctx", {"req!=8"}).weight, 3u);
  EXPECT_EQ(fleetProfile("build=ctx", {"req=9"}).weight, 0u);
  EXPECT_EQ(fleetProfile("build=ctx").weight, 13u);  // every sample, without --where
  // The same through the command, in JSON.
  ::testing::internal::CaptureStdout();
  int exit = runArchive({"top", "--clickhouse", url_, "--database", database_, "build=ctx",
                         "--where", "req=8", "--json"});
  const std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(exit, 0) << out;
  nlohmann::json doc = nlohmann::json::parse(out);
  EXPECT_EQ(doc["where"], nlohmann::json::array({"req=8"}));
  EXPECT_EQ(doc["traces"]["samples"], 4);
  EXPECT_EQ(doc["rows"][0]["name"], "leaf_b");
}

TEST_F(FleetArchive, PushingTwiceKeepsRowCounts) {
  TraceBuilder t;
  build(t, 3, 3, 3, 3);
  auto path = t.write();
  ASSERT_TRUE(path);
  auto first = push(*path, {{"build", "v1"}});
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_FALSE(first->already_present);
  auto counts = rowCounts();
  for (const auto& [table, rows] : counts) EXPECT_GT(rows, 0u) << table;
  auto second = push(*path, {{"build", "v1"}});
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_TRUE(second->already_present);
  EXPECT_EQ(second->trace_id, first->trace_id);
  EXPECT_EQ(rowCounts(), counts);
}

TEST_F(FleetArchive, InterruptedPushIsInvisibleAndCleanedOnRetry) {
  TraceBuilder t;
  build(t, 3, 3, 3, 3);
  auto path = t.write();
  ASSERT_TRUE(path);
  PushOptions dying;
  dying.database = database_;
  dying.progress = false;
  dying.batch_rows = 2;
  dying.before_table = [](const std::string& table) -> Status {
    if (table == "traces") return Error("simulated crash before the traces row");
    return Status();
  };
  auto died = pushTrace(*client_, *path, dying);
  ASSERT_FALSE(died);
  EXPECT_GT(count("SELECT count() FROM " + database_ + ".samples"), 0u);
  // Nothing is visible: no trace matches.
  auto all = parseSelector("id=" + *traceIdOfFile(*path));
  EXPECT_FALSE(queryMatchedTraces(*client_, database_, *all));

  auto retried = push(*path, {});
  ASSERT_TRUE(retried) << retried.error().message();
  EXPECT_GE(retried->cleaned_tables, 1u);
  auto fleet = FleetTrace::open(*path, false);
  ASSERT_TRUE(fleet);
  uint64_t cells = 0, lock_rows = 0, site_times = 0;
  (*fleet)->forEachSampleCell([&](const FleetSampleCell&) { ++cells; });
  (*fleet)->forEachLockRow([&](const FleetLockRow&) { ++lock_rows; });
  (*fleet)->forEachLockSiteTime([&](const FleetLockSiteTime&) { ++site_times; });
  const FleetTraceRows& rows = (*fleet)->rows();
  EXPECT_GT(lock_rows, 0u);
  EXPECT_EQ(lock_rows, (*fleet)->lockRows());
  EXPECT_EQ(count("SELECT count() FROM " + database_ + ".samples"), cells);
  EXPECT_EQ(count("SELECT count() FROM " + database_ + ".lock_intervals"), lock_rows);
  EXPECT_EQ(count("SELECT count() FROM " + database_ + ".lock_site_times"), site_times);
  EXPECT_EQ(count("SELECT count() FROM " + database_ + ".off_cpu"), rows.off_cpu.size());
  EXPECT_EQ(count("SELECT sum(samples) FROM " + database_ + ".samples"), 12u);
  EXPECT_TRUE(queryMatchedTraces(*client_, database_, *all));
}

TEST_F(FleetArchive, PushToAStoppedServerFailsCleanly) {
  TraceBuilder t;
  build(t, 1, 1, 1, 1);
  auto path = t.write();
  ASSERT_TRUE(path);
  // Port 9 on loopback: nothing listens there, as after `tools/clickhouse stop`.
  const std::string down = "http://127.0.0.1:9/";
  auto started = std::chrono::steady_clock::now();
  ::testing::internal::CaptureStderr();
  int exit = runArchive({"push", "--clickhouse", down, *path});
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(exit, 1);
  EXPECT_NE(err.find(down), std::string::npos) << err;
  EXPECT_NE(err.find("onnect"), std::string::npos)
      << err;  // "Couldn't connect", "Connection refused"
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  // A server that answers but refuses (no such database): an error naming it.
  ::testing::internal::CaptureStderr();
  exit = runArchive({"push", "--clickhouse", url_, "--database", "no_such_fleet_db", *path});
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(exit, 1);
  EXPECT_NE(err.find("archive init"), std::string::npos) << err;
}

}  // namespace
}  // namespace incise::analyzer
