// --context without BPF: the option's checks, the variable's checks in an
// ELF file, and where a running program keeps it (checked against the
// address the program prints), the executable's block placed before its
// loader has said where.
#include <gtest/gtest.h>

#include <string>

#include "objfile/tls_variable.h"
#include "recorder/context/context_locations.h"
#include "recorder/context/context_spec.h"
#include "recorder/options.h"
#include "tests/objfile/elf_test_files.h"
#include "tests/recorder/running_program.h"

namespace incise::recorder {
namespace {

using incise::testing::RunningProgram;
using testing::TempDir;

std::string errorOf(const std::vector<std::string>& texts) {
  Result<std::vector<ContextSpec>> specs = parseContextOptions(texts);
  return specs ? std::string() : specs.error().message();
}

TEST(ContextSpec, NameSymbolAndObject) {
  Result<std::vector<ContextSpec>> specs =
      parseContextOptions({"req=request_id", "conn=./libnet.so:conn_id"});
  ASSERT_TRUE(specs) << specs.error().message();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].name, "req");
  EXPECT_EQ((*specs)[0].binary, "");
  EXPECT_EQ((*specs)[0].symbol, "request_id");
  EXPECT_EQ((*specs)[1].name, "conn");
  EXPECT_EQ((*specs)[1].binary, "./libnet.so");
  EXPECT_EQ((*specs)[1].symbol, "conn_id");
}

TEST(ContextSpec, OtelIsTheTraceAndSpanIdOfTheThreadContextRecord) {
  Result<std::vector<ContextSpec>> specs = parseContextOptions({"otel", "req=request_id"});
  ASSERT_TRUE(specs) << specs.error().message();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[0].name, "trace_id");
  EXPECT_EQ((*specs)[0].symbol, "otel_thread_ctx_v1");
  EXPECT_EQ((*specs)[0].reading, ContextReading::kOtelTraceId);
  EXPECT_EQ((*specs)[1].name, "span_id");
  EXPECT_EQ((*specs)[1].reading, ContextReading::kOtelSpanId);
  EXPECT_EQ((*specs)[2].reading, ContextReading::kInteger);
  Result<std::vector<ContextSpec>> in_library = parseContextOptions({"otel:libsdk.so"});
  ASSERT_TRUE(in_library) << in_library.error().message();
  EXPECT_EQ((*in_library)[1].binary, "libsdk.so");
  EXPECT_NE(errorOf({"otel:"}).find("empty BIN"), std::string::npos);
  EXPECT_NE(errorOf({"otel", "span_id=x"}).find("'span_id' is given twice"), std::string::npos);
  EXPECT_NE(errorOf({"otel", "a=x", "b=x", "c=x"}).find("5 given, at most 4"), std::string::npos);
  EXPECT_EQ(errorOf({"otel", "a=x", "b=x"}), "");
}

TEST(ContextSpec, BadOptionsSayWhatIsWrong) {
  EXPECT_NE(errorOf({"request_id"}).find("expected NAME=SYMBOL"), std::string::npos);
  EXPECT_NE(errorOf({"9req=x"}).find("the name '9req' must be"), std::string::npos);
  EXPECT_NE(errorOf({"re q=x"}).find("the name 're q' must be"), std::string::npos);
  EXPECT_NE(errorOf({"=x"}).find("the name '' must be"), std::string::npos);
  EXPECT_NE(errorOf({"req="}).find("no SYMBOL"), std::string::npos);
  EXPECT_NE(errorOf({"req=lib.so:"}).find("no SYMBOL"), std::string::npos);
  EXPECT_NE(errorOf({"req=:x"}).find("empty BIN"), std::string::npos);
  EXPECT_NE(errorOf({"goroutine=x"}).find("reserved"), std::string::npos);
  EXPECT_NE(errorOf({"a=x", "a=y"}).find("'a' is given twice"), std::string::npos);
  EXPECT_NE(errorOf({"a=x", "b=x", "c=x", "d=x", "e=x"}).find("5 given, at most 4"),
            std::string::npos);
  EXPECT_EQ(errorOf({"a=x", "b=x", "c=x", "d=x"}), "");
}

TEST(ContextSpec, TheRecorderCommandLineCarriesThem) {
  const char* argv[] = {
      "incise-record", "--context", "req=request_id", "--context", "conn=libnet.so:conn_id", "--",
      "true"};
  Result<ParsedCommandLine> parsed = parseCommandLine(7, argv);
  ASSERT_TRUE(parsed) << parsed.error().message();
  ASSERT_EQ(parsed->config.contexts.size(), 2u);
  EXPECT_EQ(parsed->config.contexts[1].binary, "libnet.so");
  const char* bad[] = {"incise-record", "--context", "req", "--", "true"};
  Result<ParsedCommandLine> refused = parseCommandLine(5, bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("--context req"), std::string::npos);
}

// Prints its pid, its thread pointer and the address of its thread-local
// request_id, then sleeps while the test looks at it.
const char* kProgramSource = R"(
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
__thread char pad = 1;
__thread uint32_t request_id = 3;
__thread char name[24];
long plain_global = 4;
int main(void) {
  uintptr_t tp;
  __asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
  printf("%d %lu %lu\n", (int)getpid(), (unsigned long)tp, (unsigned long)&request_id);
  fflush(stdout);
  sleep(60);
  return pad + (int)request_id + name[0] + (int)plain_global;
}
)";

TEST(ContextVariable, SizeAndKindAreChecked) {
  TempDir dir;
  const std::string program = testing::compileC(dir, "context_program", kProgramSource, "");
  Result<uint8_t> size = contextVariableSize(program, {.name = "req", .symbol = "request_id"});
  ASSERT_TRUE(size) << size.error().message();
  EXPECT_EQ(*size, 4u);
  Result<uint8_t> wide = contextVariableSize(program, {.name = "n", .symbol = "name"});
  ASSERT_FALSE(wide);
  EXPECT_NE(wide.error().message().find("'name' in " + program + " is 24 bytes"), std::string::npos)
      << wide.error().message();
  Result<uint8_t> global = contextVariableSize(program, {.name = "g", .symbol = "plain_global"});
  ASSERT_FALSE(global);
  EXPECT_NE(global.error().message().find("not a thread-local one"), std::string::npos)
      << global.error().message();
  Result<uint8_t> missing = contextVariableSize(program, {.name = "m", .symbol = "no_such"});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("'no_such' is not a symbol of"), std::string::npos)
      << missing.error().message();
}

TEST(ContextLocations, ARunningProgramsVariableIsWhereItsThreadSeesIt) {
  TempDir dir;
  const std::string program = testing::compileC(dir, "context_program", kProgramSource, "");
  RunningProgram running(program);
  ASSERT_GT(running.pid(), 0u);
  const uint64_t thread_pointer = running.number(1), request_id = running.number(2);
  ContextLocations found = locateContexts(
      running.pid(), {{.name = "req", .symbol = "request_id"}, {.name = "x", .symbol = "no_such"}});
  EXPECT_TRUE(found.any());
  EXPECT_EQ(found.where.size[0], 4u);
  EXPECT_EQ(thread_pointer + static_cast<uint64_t>(found.where.tls_offset[0]), request_id);
  // The second is not in the program: not read, said, not asked again.
  EXPECT_EQ(found.where.size[1], 0u);
  ASSERT_EQ(found.missing.size(), 1u);
  EXPECT_NE(found.missing[0].find("'no_such'"), std::string::npos) << found.missing[0];
  EXPECT_FALSE(found.retry);

  // Where the ELF alone puts the executable's block (what an exec that the
  // loader has not finished gets) is where the loader put it.
  Result<objfile::TlsVariable> variable = objfile::findTlsVariable(program, "request_id");
  ASSERT_TRUE(variable) << variable.error().message();
  EXPECT_EQ(static_cast<int64_t>(variable->offset) -
                static_cast<int64_t>(variable->executableBlockOffset()),
            found.where.tls_offset[0]);
}

TEST(ContextLocations, AnObjectTheProcessDoesNotMapIsAskedForAgain) {
  TempDir dir;
  const std::string program = testing::compileC(dir, "context_program", kProgramSource, "");
  RunningProgram running(program);
  ASSERT_GT(running.pid(), 0u);
  ContextLocations found = locateContexts(
      running.pid(), {{.name = "conn", .binary = "libnotloaded.so", .symbol = "conn_id"}});
  EXPECT_FALSE(found.any());
  EXPECT_TRUE(found.retry);
  ASSERT_EQ(found.missing.size(), 1u);
  EXPECT_NE(found.missing[0].find("does not map libnotloaded.so"), std::string::npos)
      << found.missing[0];
}

}  // namespace
}  // namespace incise::recorder
