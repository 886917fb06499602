// Everything written comes back: every event kind, the header, metadata and
// stacks; column subsets and time windows decode only what they must.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/format/trace_fixture.h"

namespace incise::format {
namespace {

TEST(StackTableTest, ChunksKeptAsBlocksAndSingleStacksAnswerTheSame) {
  StackTable table;
  table.append(1, std::vector<uint64_t>{11, 12});
  table.appendChunk(2, std::vector<uint64_t>{3, 0, 1}, {21, 22, 23, 41});  // ids 2, 3, 4
  table.appendChunk(7, std::vector<uint64_t>{2}, {71, 72});                // 5, 6 lost: empty
  table.append(8, std::vector<uint64_t>{81});
  table.append(9, std::vector<uint64_t>{91, 92});
  table.appendChunk(9, std::vector<uint64_t>{1, 1}, {99, 101});  // 9 known: first wins; 10 new
  auto frames = [&](uint64_t id) {
    auto span = table.frames(id);
    return std::vector<uint64_t>(span.begin(), span.end());
  };
  EXPECT_EQ(table.maxId(), 10u);
  EXPECT_EQ(frames(1), (std::vector<uint64_t>{11, 12}));
  EXPECT_EQ(frames(2), (std::vector<uint64_t>{21, 22, 23}));
  EXPECT_TRUE(frames(3).empty());
  EXPECT_EQ(frames(4), (std::vector<uint64_t>{41}));
  EXPECT_TRUE(frames(5).empty());
  EXPECT_TRUE(frames(6).empty());
  EXPECT_EQ(frames(7), (std::vector<uint64_t>{71, 72}));
  EXPECT_EQ(frames(8), (std::vector<uint64_t>{81}));
  EXPECT_EQ(frames(9), (std::vector<uint64_t>{91, 92}));
  EXPECT_EQ(frames(10), (std::vector<uint64_t>{101}));
  EXPECT_TRUE(frames(0).empty());
  EXPECT_TRUE(frames(11).empty());
}

using test_support::ExpectedTrace;
using test_support::readRows;
using test_support::TempDir;
using test_support::writeRandomTrace;

void expectSameMetadata(const Metadata& got, const std::vector<MetadataDelta>& deltas) {
  size_t processes = 0, notes = 0;
  for (const auto& d : deltas) {
    processes += d.processes.size();
    notes += d.notes.size();
  }
  ASSERT_EQ(got.processes.size(), processes);
  ASSERT_EQ(got.notes.size(), notes);
  ASSERT_FALSE(deltas.empty());
  const MetadataDelta& first = deltas.front();
  EXPECT_EQ(got.processes[0].pid, first.processes[0].pid);
  EXPECT_EQ(got.processes[0].cmdline, first.processes[0].cmdline);
  EXPECT_EQ(got.threads[0].comm, first.threads[0].comm);
  EXPECT_EQ(got.mappings[0].build_id, first.mappings[0].build_id);
  EXPECT_EQ(got.mappings[0].start, first.mappings[0].start);
  EXPECT_EQ(got.objects[0].symbols[0].name, first.objects[0].symbols[0].name);
  EXPECT_EQ(got.objects[0].segments[0].mem_size, first.objects[0].segments[0].mem_size);
  EXPECT_EQ(got.objects[0].eh_frame, first.objects[0].eh_frame);
  EXPECT_EQ(got.kernel_symbols[0].name, first.kernel_symbols[0].name);
  EXPECT_EQ(got.perf_maps[0].entries[0].name, first.perf_maps[0].entries[0].name);
  EXPECT_EQ(got.notes.back(), deltas.back().notes.back());
}

class RoundTrip : public ::testing::TestWithParam<std::tuple<uint64_t, bool, uint32_t>> {};

TEST_P(RoundTrip, EveryKindMetadataAndStacks) {
  auto [seed, background, rows_per_chunk] = GetParam();
  TempDir dir;
  std::string path = dir.path("t.trace");
  ExpectedTrace expected = writeRandomTrace(
      path, seed, WriterOptions{.rows_per_chunk = rows_per_chunk, .background = background}, 700);

  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message();
  const Reader& r = **reader;
  EXPECT_TRUE(r.recovery().clean()) << r.recovery().why_scanned;
  EXPECT_EQ(r.header().host, "testhost");
  EXPECT_EQ(r.header().command_line, test_support::testHeader().command_line);
  EXPECT_EQ(r.header().options.lock_probes, test_support::testHeader().options.lock_probes);
  EXPECT_EQ(r.header().options.sample_frequency_hz, 999u);
  EXPECT_EQ(r.header().options.sample_event, "page-faults");
  EXPECT_EQ(r.header().options.sample_period, 7u);
  EXPECT_EQ(r.header().options.counters,
            (std::vector<std::string>{"context-switches", "cpu-migrations"}));
  EXPECT_EQ(r.endTime(), expected.end_time);
  for (EventKind kind : kAllEventKinds) {
    SCOPED_TRACE(std::string(kindName(kind)));
    size_t failures = 0;
    EXPECT_EQ(readRows(r, kind, &failures), expected.rows[kind]);
    EXPECT_EQ(failures, 0u);
    EXPECT_EQ(r.rows(kind), expected.rows[kind].size());
  }
  EXPECT_EQ(r.stacks().size(), expected.stacks.rbegin()->first);
  for (const auto& [id, frames] : expected.stacks) {
    auto got = r.stacks().frames(id);
    EXPECT_EQ(std::vector<uint64_t>(got.begin(), got.end()), frames) << "stack " << id;
  }
  EXPECT_TRUE(r.stacks().frames(0).empty());
  EXPECT_TRUE(r.stacks().frames(r.stacks().maxId() + 1).empty());
  expectSameMetadata(r.metadata(), expected.metadata);
}

INSTANTIATE_TEST_SUITE_P(Seeds, RoundTrip,
                         ::testing::Values(std::make_tuple(1, true, 64),
                                           std::make_tuple(2, false, 64),
                                           std::make_tuple(3, true, 65536),
                                           std::make_tuple(4, false, 1)));

TEST(RoundTrip, StacksAreWrittenBeforeTheChunksThatUseThem) {
  TempDir dir;
  std::string path = dir.path("t.trace");
  writeRandomTrace(path, 9, WriterOptions{.rows_per_chunk = 50}, 400);
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  uint64_t known = 0;
  for (const auto& ref : (*reader)->blocks()) {
    if (ref.block_type == BlockType::kStackChunk) {
      auto chunk = (*reader)->readChunk(ref, ColumnSet::all());
      ASSERT_TRUE(chunk) << chunk.error().message();
      known += chunk->rows();
    }
    if (ref.block_type != BlockType::kEventChunk || ref.kind == EventKind::kLost) continue;
    const KindSpec* spec = kindSpec(ref.kind);
    unsigned stack_column = spec->column_count;
    for (unsigned c = 0; c < spec->column_count; ++c) {
      if (spec->columns[c].name == "stack_id") stack_column = c;
    }
    if (stack_column == spec->column_count) continue;
    auto chunk = (*reader)->readChunk(ref, ColumnSet::all());
    ASSERT_TRUE(chunk);
    for (uint64_t id : chunk->column(stack_column)) EXPECT_LE(id, known);
  }
}

// Format 2.3: the latency options and the names of what latency rows timed.
TEST(RoundTrip, LatencyOptionsAndProbeNames) {
  TempDir dir;
  std::string path = dir.path("latency.trace");
  Header header = test_support::testHeader();
  header.options.latency_traces = {"./app:parse+4", "./server:main.handle"};
  header.options.latency_syscalls = "read,nanosleep";
  header.options.latency_block_io = true;
  header.options.latency_io_uring = true;
  header.options.latency_aggregate = true;
  header.options.latency_sample = 7;
  MetadataDelta delta;
  delta.time = 10;
  delta.latency_probes = {
      {.source = 1, .id = 1, .name = "parse", .object = "./app", .offset = 4},
      {.source = 1, .id = 2, .name = "main.handle", .object = "./server", .is_go = true},
      {.source = 2, .id = 35, .name = "nanosleep"},
  };
  {
    auto writer = Writer::create(path, header, WriterOptions{});
    ASSERT_TRUE(writer) << writer.error().message();
    (*writer)->addMetadata(MetadataDelta(delta));
    (*writer)->append(
        Latency{.time = 100, .duration = 2'000'000, .source = 2, .probe = 35, .weight = 1});
    ASSERT_TRUE((*writer)->close(200));
  }
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader) << reader.error().message();
  const RecordOptions& got = (*reader)->header().options;
  EXPECT_EQ(got.latency_traces, header.options.latency_traces);
  EXPECT_EQ(got.latency_syscalls, "read,nanosleep");
  EXPECT_TRUE(got.latency_block_io);
  EXPECT_TRUE(got.latency_io_uring);
  EXPECT_TRUE(got.latency_aggregate);
  EXPECT_EQ(got.latency_sample, 7u);
  const auto& probes = (*reader)->metadata().latency_probes;
  ASSERT_EQ(probes.size(), 3u);
  EXPECT_EQ(probes[0].object, "./app");
  EXPECT_EQ(probes[0].offset, 4u);
  EXPECT_TRUE(probes[1].is_go);
  EXPECT_EQ(probes[2].name, "nanosleep");
  ASSERT_EQ(readRows(**reader, EventKind::kLatency).size(), 1u);
  EXPECT_EQ(readRows(**reader, EventKind::kLatency)[0][1], 2'000'000u);
}

TEST(Reader, DecodesOnlyRequestedColumns) {
  TempDir dir;
  std::string path = dir.path("t.trace");
  ExpectedTrace expected = writeRandomTrace(path, 5, WriterOptions{.rows_per_chunk = 100}, 300);
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  auto refs = (*reader)->chunks(EventKind::kCpuSample);
  ASSERT_FALSE(refs.empty());
  uint64_t before = (*reader)->stats().columns_decompressed;
  auto chunk = (*reader)->readChunk(refs[0], {CpuSampleColumn::time, CpuSampleColumn::tid});
  ASSERT_TRUE(chunk);
  // And the cpu column: the rows are stored grouped by cpu and put back in
  // appended order by (time, cpu). It is not handed out.
  EXPECT_EQ((*reader)->stats().columns_decompressed - before, 3u);
  EXPECT_TRUE(chunk->column(CpuSampleColumn::cpu).empty());
  EXPECT_EQ(chunk->column(CpuSampleColumn::time).size(), chunk->rows());
  EXPECT_EQ(chunk->column(CpuSampleColumn::tid).size(), chunk->rows());
  EXPECT_TRUE(chunk->column(CpuSampleColumn::pid).empty());
  EXPECT_TRUE(chunk->column(CpuSampleColumn::stack_id).empty());
  CpuSample first = chunk->row<CpuSample>(0);
  const auto& want = expected.rows[EventKind::kCpuSample][0];
  EXPECT_EQ(first.time, want[0]);
  EXPECT_EQ(first.tid, want[3]);
  EXPECT_EQ(first.pid, 0u);  // not decoded
}

// A pid is stored as its difference from the row's tid (format 2.9): asked
// for alone, it still comes back whole, its tid decoded with it but not
// handed out.
TEST(Reader, AColumnStoredAgainstItsBaseComesBackAlone) {
  TempDir dir;
  std::string path = dir.path("t.trace");
  auto writer = Writer::create(path, test_support::testHeader(), WriterOptions{});
  ASSERT_TRUE(writer);
  std::vector<SchedSwitch> rows;
  for (uint64_t i = 0; i < 500; ++i) {
    uint64_t prev_pid = 1000 + i % 7, next_pid = 2000 + i % 5;
    rows.push_back({.time = 10'000 + i * 1000,
                    .cpu = i % 2,
                    .prev_pid = prev_pid,
                    .prev_tid = prev_pid + i % 3,  // main threads and others
                    .prev_state = 1,
                    .next_pid = next_pid,
                    .next_tid = i % 11 == 0 ? next_pid - 1 : next_pid});  // below its pid too
    (*writer)->append(rows.back());
  }
  ASSERT_TRUE((*writer)->close(1'000'000));
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  auto refs = (*reader)->chunks(EventKind::kSchedSwitch);
  ASSERT_EQ(refs.size(), 1u);
  uint64_t before = (*reader)->stats().columns_decompressed;
  auto chunk =
      (*reader)->readChunk(refs[0], {SchedSwitchColumn::prev_pid, SchedSwitchColumn::next_pid});
  ASSERT_TRUE(chunk);
  EXPECT_EQ((*reader)->stats().columns_decompressed - before, 4u);  // and both tids
  EXPECT_TRUE(chunk->column(SchedSwitchColumn::prev_tid).empty());
  EXPECT_TRUE(chunk->column(SchedSwitchColumn::next_tid).empty());
  ASSERT_EQ(chunk->rows(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SchedSwitch row = chunk->row<SchedSwitch>(i);
    ASSERT_EQ(row.prev_pid, rows[i].prev_pid) << i;
    ASSERT_EQ(row.next_pid, rows[i].next_pid) << i;
  }
  auto whole = (*reader)->readChunk(refs[0], ColumnSet::all());
  ASSERT_TRUE(whole);
  for (size_t i = 0; i < rows.size(); ++i) {
    SchedSwitch row = whole->row<SchedSwitch>(i);
    ASSERT_EQ(row.prev_tid, rows[i].prev_tid) << i;
    ASSERT_EQ(row.next_tid, rows[i].next_tid) << i;
    ASSERT_EQ(row.next_pid, rows[i].next_pid) << i;
  }
}

TEST(Reader, TimeWindowSkipsChunksOutsideIt) {
  TempDir dir;
  std::string path = dir.path("t.trace");
  Header header = test_support::testHeader();
  auto writer = Writer::create(path, header, WriterOptions{.rows_per_chunk = 1000});
  ASSERT_TRUE(writer);
  for (uint64_t t = 0; t < 10000; ++t) {
    (*writer)->append(
        CpuSample{.time = t * 1000, .cpu = t % 2, .pid = 1, .tid = 2, .stack_id = 0, .weight = 1});
  }
  ASSERT_TRUE((*writer)->close(10000 * 1000));
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader);
  ASSERT_EQ((*reader)->chunks(EventKind::kCpuSample).size(), 10u);
  TimeWindow window{2'500'000, 3'400'000};
  auto refs = (*reader)->chunks(EventKind::kCpuSample, window);
  ASSERT_EQ(refs.size(), 2u);
  size_t in_window = 0;
  for (const auto& ref : refs) {
    auto chunk = (*reader)->readChunk(ref, {CpuSampleColumn::time});
    ASSERT_TRUE(chunk);
    for (uint64_t t : chunk->column(CpuSampleColumn::time)) {
      in_window += t >= window.start && t <= window.end;
    }
  }
  EXPECT_EQ(in_window, 901u);
  EXPECT_EQ((*reader)->stats().chunks_read, 2u);
  // time and cpu (the key that puts rows grouped by cpu back in order) of each.
  EXPECT_EQ((*reader)->stats().columns_decompressed, 4u);
}

TEST(Reader, RejectsANewerMajorVersionNamingBoth) {
  TempDir dir;
  std::string path = dir.path("t.trace");
  Header header = test_support::testHeader();
  header.format_major = kFormatMajor + 1;
  header.format_minor = 3;
  auto writer = Writer::create(path, header, {});
  ASSERT_TRUE(writer);
  ASSERT_TRUE((*writer)->close(0));
  auto reader = Reader::open(path);
  ASSERT_FALSE(reader);
  const std::string& message = reader.error().message();
  EXPECT_NE(message.find(std::to_string(kFormatMajor + 1) + ".3"), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(kFormatMajor) + "." + std::to_string(kFormatMinor)),
            std::string::npos)
      << message;
}

TEST(Reader, RejectsFilesThatAreNotTraces) {
  TempDir dir;
  auto missing = Reader::open(dir.path("nope.trace"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("No such file"), std::string::npos);
  test_support::writeFile(dir.path("text"), "hello, this is not a trace at all\n");
  auto text = Reader::open(dir.path("text"));
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message().find("not an incise trace"), std::string::npos);
  test_support::writeFile(dir.path("empty"), "");
  EXPECT_FALSE(Reader::open(dir.path("empty")));
  EXPECT_FALSE(Reader::open(dir.path("")));
}

TEST(Writer, CreatesFilesPrivateToTheOwner) {
  TempDir dir;
  std::string path = dir.path("t.trace");
  test_support::writeFile(path, "old contents");
  ::chmod(path.c_str(), 0644);
  auto writer = Writer::create(path, test_support::testHeader(), {});
  ASSERT_TRUE(writer);
  ASSERT_TRUE((*writer)->close(0));
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_TRUE(Reader::open(path));
}

}  // namespace
}  // namespace incise::format
