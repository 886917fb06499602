// Where a Go thread keeps its goroutine (recorder/sources/goroutine_ids.h): the g
// slot's TLS offset decoded from runtime.stackcheck's first instructions,
// in both forms the Go linker writes (with and without
// -buildmode=pie, as Go 1.19 builds them), refused in other code; and the
// layout of the bundled Go workload, when it was built, its DWARF offsets
// checked against binutils' own reading of that DWARF (objdump).
#include "recorder/sources/goroutine_ids.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "recorder/probes/go_goid_offset.h"

namespace incise::recorder {
namespace {

// "runtime.g.goid" -> its DW_AT_data_member_location, as objdump prints
// the binary's DWARF (only the runtime.g and runtime.m members).
std::map<std::string, uint64_t> objdumpMemberOffsets(const std::string& binary) {
  std::map<std::string, uint64_t> offsets;
  FILE* pipe = popen(("objdump --dwarf=info '" + binary + "' 2>/dev/null").c_str(), "r");
  if (!pipe) return offsets;
  std::string structure, member, line;
  bool in_structure = false, in_member = false;
  char buffer[1024];
  while (fgets(buffer, sizeof buffer, pipe)) {
    line = buffer;
    auto last_word = [&] {
      std::istringstream words(line);
      std::string word, last;
      while (words >> word) last = word;
      return last;
    };
    if (line.find("DW_TAG_structure_type") != std::string::npos) {
      in_structure = true;
      in_member = false;
    } else if (line.find("DW_TAG_member") != std::string::npos) {
      in_member = true;
      member.clear();
    } else if (line.find("DW_TAG_") != std::string::npos) {
      in_member = false;
    } else if (line.find("DW_AT_name") != std::string::npos) {
      if (in_structure) {
        structure = last_word();
        in_structure = false;
      } else if (in_member) {
        member = last_word();
      }
    } else if (in_member && line.find("DW_AT_data_member_location") != std::string::npos) {
      if (structure == "runtime.g" || structure == "runtime.m")
        offsets.emplace(structure + "." + member, std::stoull(last_word()));
      in_member = false;
    }
  }
  pclose(pipe);
  return offsets;
}

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

  std::map<std::string, uint64_t> objdump = objdumpMemberOffsets(binary);
  if (objdump.empty()) GTEST_SKIP() << "objdump could not read " << binary << "'s DWARF";
  EXPECT_EQ((*layout)->goid_offset, objdump["runtime.g.goid"]);
  EXPECT_EQ((*layout)->g_m_offset, objdump["runtime.g.m"]);
  EXPECT_EQ((*layout)->m_curg_offset, objdump["runtime.m.curg"]);
  EXPECT_NE((*layout)->g_m_offset, 0u);
  EXPECT_NE((*layout)->m_curg_offset, 0u);
}

}  // namespace
}  // namespace incise::recorder
