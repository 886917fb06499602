// The latency sources' pure parts: syscall names, --trace parsing, what a
// function's machine code says (RET offsets, stack depth at an offset), and
// block device names from sysfs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "recorder/probes/function_code.h"
#include "recorder/probes/function_probe_spec.h"
#include "recorder/probes/syscall_table.h"
#include "recorder/sources/block_io_source.h"

namespace incise::recorder {
namespace {

TEST(SyscallTable, NamesAndNumbersOfTheX86_64Abi) {
  EXPECT_EQ(syscallName(0), "read");
  EXPECT_EQ(syscallName(35), "nanosleep");
  EXPECT_EQ(syscallName(202), "futex");
  auto numbers = syscallNumbers("read,nanosleep,read");
  ASSERT_TRUE(numbers) << numbers.error().message();
  EXPECT_EQ(*numbers, (std::vector<uint32_t>{0, 35}));
}

TEST(SyscallTable, UnknownNamesAndSyscallsThatNeverReturnAreErrors) {
  auto unknown = syscallNumbers("read,reed");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("unknown syscall 'reed'"), std::string::npos);
  auto exits = syscallNumbers("exit_group");
  ASSERT_FALSE(exits);
  EXPECT_NE(exits.error().message().find("never returns"), std::string::npos);
  EXPECT_FALSE(syscallNumbers("read,,write"));
  auto all = syscallNumbers("all");
  ASSERT_TRUE(all);
  EXPECT_GT(all->size(), 300u);
  EXPECT_EQ(std::count(all->begin(), all->end(), 231u), 0);  // exit_group left out
  EXPECT_EQ(std::count(all->begin(), all->end(), 35u), 1);
}

TEST(FunctionProbeSpec, BinaryFunctionAndOffset) {
  auto plain = parseFunctionProbe("./app:parse");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->binary, "./app");
  EXPECT_EQ(plain->symbol, "parse");
  EXPECT_EQ(plain->offset, 0u);
  auto hex = parseFunctionProbe("/srv/x:handle+0x1c");
  ASSERT_TRUE(hex);
  EXPECT_EQ(hex->offset, 0x1cu);
  EXPECT_EQ(hex->symbol, "handle");
  auto go = parseFunctionProbe("/srv/go:main.(*Server).handle+4");
  ASSERT_TRUE(go);
  EXPECT_EQ(go->symbol, "main.(*Server).handle");
  EXPECT_EQ(go->offset, 4u);
  auto kernel = parseFunctionProbe("kernel:vfs_read");
  ASSERT_TRUE(kernel);
  EXPECT_TRUE(kernel->kernel());
  EXPECT_FALSE(parseFunctionProbe("nocolon"));
  EXPECT_FALSE(parseFunctionProbe("./app:"));
  EXPECT_FALSE(parseFunctionProbe("./app:f+zz"));
  EXPECT_FALSE(parseFunctionProbe("kernel:vfs_read+4"));
}

TEST(FunctionProbeSpec, AMissingBinaryOrSymbolIsNamed) {
  auto spec = parseFunctionProbe("/no/such/binary:main");
  ASSERT_TRUE(spec);
  auto missing = resolveFunctionProbe(*spec, 1);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("/no/such/binary"), std::string::npos);
  auto self = parseFunctionProbe("/proc/self/exe:no_such_symbol_here");
  ASSERT_TRUE(self);
  auto no_symbol = resolveFunctionProbe(*self, 1);
  ASSERT_FALSE(no_symbol);
  EXPECT_NE(no_symbol.error().message().find("no symbol 'no_such_symbol_here'"), std::string::npos)
      << no_symbol.error().message();
}

// push %rbp; mov %rsp,%rbp; sub $0x20,%rsp; cmp $0,%rdi; je +2 (to the
// second ret); leave; ret; xor %eax,%eax; leave; ret
const std::vector<uint8_t> kFunction = {
    0x55,                    // +0  push %rbp
    0x48, 0x89, 0xe5,        // +1  mov %rsp,%rbp
    0x48, 0x83, 0xec, 0x20,  // +4  sub $0x20,%rsp
    0x48, 0x83, 0xff, 0x00,  // +8  cmp $0,%rdi
    0x74, 0x02,              // +12 je +16
    0xc9,                    // +14 leave
    0xc3,                    // +15 ret
    0x31, 0xc0,              // +16 xor %eax,%eax
    0xc9,                    // +18 leave
    0xc3,                    // +19 ret
    0xcc, 0xcc,              // padding
};

TEST(FunctionCode, ReturnsAndTheStackDepthAtAnOffset) {
  auto at_entry = analyzeFunctionCode(kFunction, 0x1000, 0);
  ASSERT_TRUE(at_entry) << at_entry.error().message();
  EXPECT_EQ(at_entry->returns, (std::vector<uint64_t>{15, 19}));
  EXPECT_EQ(at_entry->sp_delta, 0u);
  auto after_push = analyzeFunctionCode(kFunction, 0x1000, 1);
  ASSERT_TRUE(after_push);
  EXPECT_EQ(after_push->sp_delta, 8u);
  auto after_sub = analyzeFunctionCode(kFunction, 0x1000, 8);
  ASSERT_TRUE(after_sub);
  EXPECT_EQ(after_sub->sp_delta, 8u + 0x20u);
  // The conditional jump falls through to +14: still the straight-line start.
  auto after_jcc = analyzeFunctionCode(kFunction, 0x1000, 14);
  ASSERT_TRUE(after_jcc);
  EXPECT_EQ(after_jcc->sp_delta, 8u + 0x20u);
}

TEST(FunctionCode, OffsetsItCannotFollowAreErrorsThatSayWhy) {
  auto inside = analyzeFunctionCode(kFunction, 0x1000, 2);
  ASSERT_FALSE(inside);
  EXPECT_NE(inside.error().message().find("inside an instruction"), std::string::npos);
  auto after_ret = analyzeFunctionCode(kFunction, 0x1000, 16);
  ASSERT_FALSE(after_ret);
  EXPECT_NE(after_ret.error().message().find("cannot tell the stack depth"), std::string::npos);
  EXPECT_FALSE(analyzeFunctionCode(kFunction, 0x1000, 100));
}

TEST(BlockDeviceName, FromSysfsUeventElseTheNumbers) {
  std::filesystem::path root = std::filesystem::temp_directory_path() / "incise_sysfs_test";
  std::filesystem::create_directories(root / "dev/block/7:3");
  std::ofstream(root / "dev/block/7:3/uevent") << "MAJOR=7\nMINOR=3\nDEVNAME=loop3\n";
  EXPECT_EQ(blockDeviceName((uint64_t{7} << 20) | 3, root.string()), "loop3");
  EXPECT_EQ(blockDeviceName((uint64_t{8} << 20) | 16, root.string()), "8:16");
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace incise::recorder
