// RingPoller against a real BPF ring buffer, filled by a small socket-filter
// program run through BPF_PROG_TEST_RUN: one 8-byte record per run.
#include "recorder/ring_poller.h"

#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <cerrno>
#include <cstring>

#include "base/unique_fd.h"
#include "recorder/libbpf_options.h"

namespace incise::recorder {
namespace {

bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}

// bpf_ringbuf_output(ring, &(u64){7}, 8, 0); return 0;
UniqueFd loadRecordWriter(int ring_fd) {
  const bpf_insn program[] = {
      insn(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, 7),
      insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, ring_fd),
      insn(0, 0, 0, 0, 0),
      insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
      insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8),
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 8),
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0),
      insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output),
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
      insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  return UniqueFd(bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "ring_writer", "GPL", program,
                                sizeof(program) / sizeof(program[0]), nullptr));
}

void writeRecords(int program_fd, int count) {
  unsigned char packet[64] = {};
  auto run = libbpfOptions<bpf_test_run_opts>();
  run.data_in = packet;
  run.data_size_in = sizeof(packet);
  run.repeat = count;
  ASSERT_EQ(bpf_prog_test_run_opts(program_fd, &run), 0) << std::strerror(errno);
}

struct Reader {
  RingPoller* poller = nullptr;
  int seen = 0;
  int pause_at = 0;  // the record whose callback pauses the poll
  static int onRecord(void* context, void* data, size_t size) {
    auto* self = static_cast<Reader*>(context);
    uint64_t value = 0;
    if (size == sizeof(value)) std::memcpy(&value, data, sizeof(value));
    EXPECT_EQ(value, 7u);
    if (++self->seen == self->pause_at) {
      EXPECT_TRUE(self->poller->pause());
    }
    return 0;
  }
};

TEST(RingPoller, PauseEndsTheDrainAndKeepsTheRestForTheNext) {
  UniqueFd ring(bpf_map_create(BPF_MAP_TYPE_RINGBUF, "test_ring", 0, 0, 1 << 16, nullptr));
  ASSERT_TRUE(ring) << "BPF ring buffer: " << std::strerror(errno);
  UniqueFd program = loadRecordWriter(ring.get());
  ASSERT_TRUE(program) << "load the record writer: " << std::strerror(errno);

  RingPoller poller;
  Reader reader{.poller = &poller, .pause_at = 2};
  ASSERT_TRUE(poller.add(ring.get(), &Reader::onRecord, &reader));
  writeRecords(program.get(), 5);
  EXPECT_FALSE(poller.pause()) << "no drain under way";

  Result<int> first = poller.drain();
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(*first, 2);
  EXPECT_EQ(reader.seen, 2);

  Result<int> rest = poller.drain();
  ASSERT_TRUE(rest) << rest.error().message();
  EXPECT_EQ(*rest, 3);
  EXPECT_EQ(reader.seen, 5);
  EXPECT_EQ(poller.eventsConsumed(), 5u);

  Result<int> none = poller.poll(0);
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_EQ(*none, 0);
}

}  // namespace
}  // namespace incise::recorder
