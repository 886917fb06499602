// Where a Go thread keeps its goroutine (recorder/goroutine_ids.h): the g
// slot's TLS offset decoded from runtime.stackcheck's first instructions,
// in both forms the Go linker writes (with and without
// -buildmode=pie, as Go 1.19 builds them), refused in other code; and the
// layout of the bundled Go workload, when it was built.
#include "recorder/goroutine_ids.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "recorder/go_goid_offset.h"

namespace incise::recorder {
namespace {

TEST(TlsGOffset, DirectFsLoad) {
  // mov %fs:0xfffffffffffffff8,%rax; cmp %rsp,0x8(%rax)
  std::vector<uint8_t> code = {0x64, 0x48, 0x8b, 0x04, 0x25, 0xf8, 0xff,
                               0xff, 0xff, 0x48, 0x39, 0x60, 0x08};
  EXPECT_EQ(tlsGOffset(code), -8);
  code[5] = 0xb0;  // -80: a static binary with C TLS variables before Go's
  EXPECT_EQ(tlsGOffset(code), -80);
}

TEST(TlsGOffset, PositionIndependentLoadThroughARegister) {
  // mov $0xfffffffffffffff8,%rcx; mov %fs:(%rcx),%rax
  std::vector<uint8_t> code = {0x48, 0xc7, 0xc1, 0xf8, 0xff, 0xff, 0xff,
                               0x64, 0x48, 0x8b, 0x01, 0x48, 0x39, 0x60};
  EXPECT_EQ(tlsGOffset(code), -8);
  code[10] = 0x02;  // mov %fs:(%rdx),%rax: not the register just set
  EXPECT_EQ(tlsGOffset(code), std::nullopt);
}

TEST(TlsGOffset, OtherCodeIsRefused) {
  // cmp 0x10(%r14),%rsp: a register-ABI function's own stack check.
  std::vector<uint8_t> code = {0x49, 0x3b, 0x66, 0x10, 0x0f, 0x86, 0x10, 0x00, 0x00, 0x00, 0x90};
  EXPECT_EQ(tlsGOffset(code), std::nullopt);
  EXPECT_EQ(tlsGOffset({}), std::nullopt);
}

TEST(GoThreadLayout, AProgramWithoutTheGoRuntimeIsNotGo) {
  Result<std::optional<go_process>> layout = goThreadLayout("/proc/self/exe");
  ASSERT_TRUE(layout) << layout.error().message();
  EXPECT_FALSE(*layout);
}

TEST(GoThreadLayout, TheGoWorkloadsThreadsKeepGAtMinus8) {
  const std::string binary = INCISE_WORKLOADS_DIR "/go_goroutines";
  if (!std::filesystem::exists(binary)) GTEST_SKIP() << binary << " not built (no Go toolchain)";
  Result<std::optional<go_process>> layout = goThreadLayout(binary);
  ASSERT_TRUE(layout) << layout.error().message();
  ASSERT_TRUE(*layout);
  EXPECT_EQ((*layout)->tls_g, -8);
  Result<uint64_t> goid = goroutineIdOffset(binary);
  ASSERT_TRUE(goid) << goid.error().message();
  EXPECT_EQ((*layout)->goid_offset, *goid);
}

}  // namespace
}  // namespace incise::recorder
