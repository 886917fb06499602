#include "analyzer/model/trace.h"

#include <gtest/gtest.h>

#include <set>

#include "analyzer/model/stack_namer.h"
#include "analyzer/model/time_ordered_rows.h"
#include "tests/analyzer/reports/trace_builder.h"
#include "tests/format/trace_fixture.h"

namespace incise::analyzer {
namespace {
using testing::TraceBuilder;

std::unique_ptr<Trace> open(const std::string& path, TraceOptions options = {}) {
  options.progress = false;
  auto trace = Trace::open(path, options);
  EXPECT_TRUE(trace) << trace.error().message();
  return trace ? trace.take() : nullptr;
}

TEST(TraceTest, ManyChunksDecodedInParallelArriveInFileOrder) {
  TraceBuilder b;
  b.setRowsPerChunk(7);
  uint64_t stack = b.stack({"main"});
  for (uint64_t i = 0; i < 1000; ++i) b.sample(i * 10, 101 + i % 3, stack, i % 2);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  for (unsigned threads : {1u, 2u, 8u}) {
    TraceOptions options;
    options.threads = threads;
    auto trace = open(*path, options);
    ASSERT_TRUE(trace);
    std::vector<uint64_t> times;
    trace->forEachRow<format::CpuSample>(
        [&](const format::CpuSample& s) { times.push_back(s.time); });
    ASSERT_EQ(times.size(), 1000u) << threads;
    for (size_t i = 0; i < times.size(); ++i) {
      ASSERT_EQ(times[i], TraceBuilder::kStartNs + i * 10) << "threads " << threads << " row " << i;
    }
    EXPECT_EQ(trace->losses().used_by_kind.at("cpu_sample"), 1000u);
  }
}

TEST(TraceTest, RowsReadInTwoPassesAreUsedOnce) {
  TraceBuilder b;
  uint64_t stack = b.stack({"main"});
  for (uint64_t i = 0; i < 30; ++i) b.sample(i * 10, 101 + i % 3, stack);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  TraceOptions options;
  options.filter.tids = {101};
  auto trace = open(*path, options);
  ASSERT_TRUE(trace);
  for (int pass = 0; pass < 2; ++pass) trace->forEachRow<format::CpuSample>([](const auto&) {});
  EXPECT_EQ(trace->losses().used_by_kind.at("cpu_sample"), 10u);
}

TEST(TraceTest, FiltersByPidTidCpuCommAndTime) {
  TraceBuilder b;
  b.thread(101, "alpha");
  b.thread(102, "beta");
  uint64_t stack = b.stack({"main"});
  for (uint64_t i = 0; i < 10; ++i) b.sample(i * 1'000'000, i % 2 ? 102 : 101, stack, i % 2);
  auto path = b.write();
  ASSERT_TRUE(path);
  auto count = [&](auto configure) {
    TraceOptions options;
    configure(options.filter);
    auto trace = open(*path, options);
    size_t n = 0;
    trace->forEachRow<format::CpuSample>([&](const format::CpuSample&) { ++n; });
    return n;
  };
  EXPECT_EQ(count([](Filter&) {}), 10u);
  EXPECT_EQ(count([](Filter& f) { f.tids = {101}; }), 5u);
  EXPECT_EQ(count([](Filter& f) { f.pids = {TraceBuilder::kPid}; }), 10u);
  EXPECT_EQ(count([](Filter& f) { f.pids = {1}; }), 0u);
  EXPECT_EQ(count([](Filter& f) { f.cpus = {1}; }), 5u);
  EXPECT_EQ(count([](Filter& f) { f.comms = {"beta"}; }), 5u);
  EXPECT_EQ(count([](Filter& f) { f.comms = {"app"}; }), 10u);  // the process name
  // Samples at 0..9 ms: [2 ms, 4 ms] keeps 2, 3 and 4.
  EXPECT_EQ(count([](Filter& f) { f.window = RelativeWindow{2'000'000, 4'000'000}; }), 3u);
}

TEST(TraceTest, RowsAreSortedByTimeAndNamesResolve) {
  TraceBuilder b;
  b.thread(101, "worker");
  b.sched(300, 0, 101, 1, 0);
  b.sched(100, 0, 0, 0, 101);
  auto path = b.write();
  ASSERT_TRUE(path);
  auto trace = open(*path);
  std::vector<format::SchedSwitch> switches;
  TimeOrderedRows<format::SchedSwitch> rows(*trace);
  for (; rows.peek(); rows.pop()) switches.push_back(*rows.peek());
  ASSERT_EQ(switches.size(), 2u);
  EXPECT_LT(switches[0].time, switches[1].time);
  EXPECT_EQ(trace->threadName(101, switches[0].time), "worker");
  EXPECT_EQ(trace->pidOf(101), TraceBuilder::kPid);
  EXPECT_EQ(trace->durationNs(), 301u);
}

TEST(TraceTest, StackNamerResolvesEmbeddedSymbolsRootFirst) {
  TraceBuilder b;
  b.function("memcpy", "libc");
  uint64_t stack = b.stack({"memcpy", "parse", "main"});
  b.sample(10, 101, stack);
  auto path = b.write();
  ASSERT_TRUE(path);
  auto trace = open(*path);
  uint64_t id = 0;
  trace->forEachRow<format::CpuSample>([&](const format::CpuSample& s) { id = s.stack_id; });
  StackNamer by_function(*trace, FrameGrouping::kFunction);
  EXPECT_EQ(by_function.rootFirstNames(TraceBuilder::kPid, id, 0),
            (std::vector<std::string>{"main", "parse", "memcpy"}));
  StackNamer by_module(*trace, FrameGrouping::kModule);
  EXPECT_EQ(by_module.rootFirstNames(TraceBuilder::kPid, id, 0),
            (std::vector<std::string>{"app", "app", "libc"}));
  // One id per distinct name: both "app" frames share it, and naming again reuses it.
  std::span<const NameId> modules = by_module.rootFirst(TraceBuilder::kPid, id, 0);
  ASSERT_EQ(modules.size(), 3u);
  EXPECT_EQ(modules[0], modules[1]);
  EXPECT_NE(modules[1], modules[2]);
  EXPECT_EQ(by_module.names().size(), 2u);
  EXPECT_TRUE(by_function.rootFirst(TraceBuilder::kPid, 0, 0).empty());
  EXPECT_FALSE(parseFrameGrouping("colour"));
}

TEST(TraceTest, LossesCountLostRowsPerSource) {
  TraceBuilder b;
  uint64_t stack = b.stack({"main"});
  for (int i = 0; i < 99; ++i) b.sample(i, 101, stack);
  b.lost(50, format::LostSource::kCpuSamples, 1);
  auto path = b.write();
  ASSERT_TRUE(path);
  auto trace = open(*path);
  trace->forEachRow<format::CpuSample>([](const format::CpuSample&) {});
  LossSummary losses = trace->losses();
  EXPECT_EQ(losses.lost(), 1u);
  EXPECT_EQ(losses.rows(), 99u);
  EXPECT_DOUBLE_EQ(losses.percentLost(), 1.0);
  EXPECT_FALSE(losses.significant());  // exactly 1% is not "more than 1%"
}

// Lock rows carry the request time in `time`; a window keeps every interval
// that overlaps it (request..release, or request..acquired when the release
// was not seen), even one whose chunk holds only requests from before the
// window. One row per chunk, so skipping chunks by time would drop them.
TEST(TraceTest, TimeWindowKeepsLockIntervalsThatStartedBeforeIt) {
  TraceBuilder b;
  b.thread(101, "alpha");
  b.setRowsPerChunk(1);
  uint64_t stack = b.stack({"main"});
  const uint64_t address = 0x1000;
  b.lock(101, address, /*request=*/50, /*acquired=*/60, /*release=*/900, stack);  // before
  b.lock(101, address + 1, 100, 200, 3'500, stack);                               // held into
  b.lock(101, address + 2, 10, 3'600, 0, stack);                                  // waits into
  b.lock(101, address + 3, 2'000, 2'100, 9'000, stack);                           // held across
  b.lock(101, address + 4, 3'200, 3'300, 3'400, stack);                           // inside
  b.lock(101, address + 5, 6'000, 6'100, 6'200, stack);                           // after
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  TraceOptions options;
  options.filter.window = RelativeWindow{3'000, 4'000};
  auto trace = open(*path, options);
  ASSERT_TRUE(trace);
  std::set<uint64_t> kept;
  trace->forEachRow<format::LockInterval>(
      [&](const format::LockInterval& l) { kept.insert(l.address - address); });
  EXPECT_EQ(kept, (std::set<uint64_t>{1, 2, 3, 4}));
}

TEST(TraceTest, MissingFileIsAnErrorNamingIt) {
  auto trace = Trace::open("/nonexistent/x.trace", {});
  ASSERT_FALSE(trace);
  EXPECT_NE(trace.error().message().find("/nonexistent/x.trace"), std::string::npos);
}

// A report that reads few columns gets the filter's columns anyway: the rows
// that pass are the same whatever it asks for. Random rows of every kind
// (small ids are frequent), filtered on each id, cpu and time field.
template <typename Row>
std::vector<uint64_t> passingTimes(Trace& trace, format::ColumnSet columns) {
  std::vector<uint64_t> times;
  trace.forEachRow<Row>([&](const Row& row) { times.push_back(row.time); }, columns);
  return times;
}

template <typename Row>
std::vector<uint64_t> timeOrderedTimes(Trace& trace, format::ColumnSet columns) {
  std::vector<uint64_t> times;
  TimeOrderedRows<Row> rows(trace, false, LookAhead::kNever, RowScope::kFiltered, columns);
  for (const Row* row; (row = rows.peek()) != nullptr; rows.pop()) times.push_back(row->time);
  return times;
}

TEST(TraceTest, ProjectedReadsPassTheSameRowsAsFullOnes) {
  format::test_support::TempDir dir;
  std::string path = dir.path("random.trace");
  format::test_support::writeRandomTrace(path, 7, {.rows_per_chunk = 64}, 2000);
  std::vector<std::function<void(Filter&)>> filters = {
      [](Filter& f) {
        f.pids = {0, 1};
      },
      [](Filter& f) {
        f.tids = {0, 1, 2};
      },
      [](Filter& f) { f.cpus = {1}; },
      [](Filter& f) {
        f.window = RelativeWindow{200'000, 600'000};
      },
      [](Filter& f) {
        f.pids = {0};
        f.cpus = {0, 3};
      },
  };
  size_t filtered_out = 0;
  for (size_t i = 0; i < filters.size(); ++i) {
    TraceOptions options;
    filters[i](options.filter);
    auto trace = open(path, options);
    ASSERT_TRUE(trace);
    auto expectSame = [&]<typename Row>(Row*) {
      std::vector<uint64_t> full = passingTimes<Row>(*trace, format::ColumnSet::all());
      EXPECT_EQ(passingTimes<Row>(*trace, format::ColumnSet{}), full)
          << format::kindName(Row::kKind) << ", filter " << i;
      EXPECT_EQ(timeOrderedTimes<Row>(*trace, format::ColumnSet{}).size(), full.size())
          << format::kindName(Row::kKind) << ", filter " << i;
      filtered_out += trace->reader().rows(Row::kKind) - full.size();
    };
#define INCISE_X(enumerator, id, Struct, COLUMNS, doc) \
  expectSame(static_cast<format::Struct*>(nullptr));
    INCISE_EVENT_KINDS(INCISE_X)
#undef INCISE_X
  }
  EXPECT_GT(filtered_out, 0u);  // the filters took rows out
}

TEST(TraceTest, ProjectedReadsLeaveOtherColumnsZero) {
  format::test_support::TempDir dir;
  std::string path = dir.path("random.trace");
  format::test_support::writeRandomTrace(path, 8, {.rows_per_chunk = 64}, 500);
  auto trace = open(path);
  ASSERT_TRUE(trace);
  uint64_t stacks = 0, weights = 0;
  trace->forEachRow<format::CpuSample>(
      [&](const format::CpuSample& s) {
        stacks += s.stack_id != 0;
        weights += s.weight != 0;
      },
      {format::CpuSampleColumn::stack_id});
  EXPECT_GT(stacks, 0u);
  EXPECT_EQ(weights, 0u);
  EXPECT_EQ(trace->decodedColumns(format::EventKind::kCpuSample, format::ColumnSet::all()),
            format::ColumnSet::all());
}

}  // namespace
}  // namespace incise::analyzer
