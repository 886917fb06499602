// Trace + UnwoundStacks end to end, without the recorder: a real stack (the
// stack-dump program's) written into a -g dwarf trace as many samples across
// many chunks, some with truncated copies. Reports must see the unwound user
// frames under the sample's kernel frames, the same stack ids whatever the
// number of decoding threads, and [unwind-stop] where the copy ran out.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "analyzer/model/trace.h"
#include "analyzer/unwind/unwind_marker.h"
#include "analyzer/unwind/unwinder.h"
#include "format/writer.h"
#include "tests/analyzer/unwind/stack_dump_program.h"

namespace incise::analyzer {
namespace {

constexpr uint64_t kKernelFrame = 0xffffffff81000000ull;
constexpr size_t kSamples = 60;

bool truncated(size_t i) {
  return i % 5 == 3;
}

std::string writeDwarfTrace(const incise::testing::TempDir& dir, const testing::StackDump& dump) {
  std::string path = dir.file("dwarf.trace");
  format::Header header;
  header.host = "testhost";
  header.start_mono_ns = 1;
  header.options.stack_mode = "dwarf";
  header.options.dwarf_stack_bytes = 8192;
  // Small chunks: the samples spread over many, decoded by several threads.
  auto writer = format::Writer::create(path, header, {.rows_per_chunk = 7});
  EXPECT_TRUE(writer) << writer.error().message();
  if (!writer) return path;
  format::MetadataDelta delta;
  delta.time = 1;
  delta.processes.push_back(format::Process{dump.pid, 1, "stack_dump", {}, 1});
  delta.mappings = dump.metadata.mappings;
  delta.objects = dump.metadata.objects;
  (*writer)->addMetadata(std::move(delta));
  auto* bytes = reinterpret_cast<const uint8_t*>(dump.stack.data());
  for (size_t i = 0; i < kSamples; ++i) {
    // The kernel's part differs between samples; the frame-pointer user part is just the leaf.
    std::vector<uint64_t> frames = {kKernelFrame + (i % 3) * 0x10, dump.regs.ip};
    uint64_t stack = (*writer)->internStack(frames);
    format::CpuSample row{.time = 10 + i,
                          .cpu = 0,
                          .pid = dump.pid,
                          .tid = dump.pid,
                          .stack_id = stack,
                          .weight = 1,
                          .user_ip = dump.regs.ip,
                          .user_sp = dump.regs.sp,
                          .user_bp = dump.regs.bp};
    size_t copied = truncated(i) ? 64 : dump.stack.size();
    (*writer)->append(row, std::span<const uint8_t>(bytes, copied));
  }
  Status closed = (*writer)->close(1000);
  EXPECT_TRUE(closed) << closed.error().message();
  return path;
}

// time -> (stack id, frames) as a report sees them.
std::map<uint64_t, std::pair<uint64_t, std::vector<uint64_t>>> samplesSeen(const std::string& path,
                                                                           unsigned threads) {
  std::map<uint64_t, std::pair<uint64_t, std::vector<uint64_t>>> seen;
  TraceOptions options;
  options.threads = threads;
  auto trace = Trace::open(path, options);
  EXPECT_TRUE(trace) << trace.error().message();
  if (!trace) return seen;
  (*trace)->forEachRow<format::CpuSample>([&](const format::CpuSample& s) {
    std::span<const uint64_t> frames = (*trace)->stacks().frames(s.stack_id);
    seen[s.time] = {s.stack_id, std::vector<uint64_t>(frames.begin(), frames.end())};
  });
  return seen;
}

TEST(UnwoundTrace, ReportsSeeUnwoundStacksWhateverTheThreadCount) {
  incise::testing::TempDir dir;
  testing::StackDump dump = testing::recordStackDump(dir);
  ASSERT_FALSE(dump.stack.empty()) << "the stack-dump program did not run";
  Unwinder unwinder(dump.metadata);
  UnwindResult full = unwinder.unwind(dump.pid, 10, dump.regs, dump.memory());
  ASSERT_EQ(full.end, UnwindEnd::kOutermost);
  ASSERT_GE(full.frames.size(), 4u);

  std::string path = writeDwarfTrace(dir, dump);
  auto one = samplesSeen(path, 1);
  auto three = samplesSeen(path, 3);
  ASSERT_EQ(one.size(), kSamples);
  EXPECT_EQ(one, three);  // same ids and frames: interning happens in file order
  for (const auto& [time, sample] : one) {
    size_t i = time - 10;
    const std::vector<uint64_t>& frames = sample.second;
    ASSERT_GE(frames.size(), 2u);
    EXPECT_EQ(frames[0], kKernelFrame + (i % 3) * 0x10) << "kernel frames stay first";
    std::vector<uint64_t> user(frames.begin() + 1, frames.end());
    if (truncated(i)) {
      EXPECT_TRUE(isUnwindStop(user.back())) << "sample " << i;
      EXPECT_LT(user.size(), full.frames.size() + 1);
    } else {
      EXPECT_EQ(user, full.frames) << "sample " << i;
    }
  }
  // Three kernel variants x (full, truncated): six distinct unwound stacks.
  std::set<uint64_t> ids;
  for (const auto& [time, sample] : one) ids.insert(sample.first);
  EXPECT_EQ(ids.size(), 6u);
}

}  // namespace
}  // namespace incise::analyzer
