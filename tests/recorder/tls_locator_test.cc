#include "recorder/context/tls_locator.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "bpf/context.h"
#include "tests/objfile/elf_test_files.h"
#include "tests/recorder/running_program.h"

namespace incise::recorder {
namespace {

using testing::TempDir;

// Prints its pid, its thread pointer (%fs:0) and the addresses of a
// library's thread-local, its own and (given a library to dlopen) the opened
// library's, then sleeps while the test looks at it.
const char* kProgramSource = R"(
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
extern __thread long lib_var;
__thread long exe_var = 9;
int main(int argc, char** argv) {
  long* opened = 0;
  if (argc > 1) {
    void* library = dlopen(argv[1], RTLD_NOW);
    if (!library) return 3;
    opened = ((long* (*)(void))dlsym(library, "opened_var_address"))();
  }
  uintptr_t tp;
  __asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
  printf("%d %lu %lu %lu %lu\n", (int)getpid(), (unsigned long)tp, (unsigned long)&lib_var,
         (unsigned long)&exe_var, (unsigned long)opened);
  fflush(stdout);
  sleep(60);
  return (int)(lib_var + exe_var);
}
)";

struct Printed {
  int pid = 0;
  uint64_t thread_pointer = 0, lib_var = 0, exe_var = 0, opened_var = 0;
};

// The programs of one test, built in a temporary directory.
class TlsPrograms {
 public:
  TlsPrograms() {
    testing::writeFile(dir_.file("tlslib.c"), "__thread long lib_var = 4;");
    testing::writeFile(dir_.file("tlsopened.c"),
                       "__thread long opened_var = 5;\n"
                       "long* opened_var_address(void) { return &opened_var; }");
    testing::writeFile(dir_.file("program.c"), kProgramSource);
    testing::run("cc -shared -fPIC -o " + dir_.file("libtlslib.so") + " " + dir_.file("tlslib.c"));
    testing::run("cc -shared -fPIC -o " + dir_.file("libtlsopened.so") + " " +
                 dir_.file("tlsopened.c"));
    testing::run("cc -fPIE -pie -o " + program() + " " + dir_.file("program.c") + " -L" +
                 dir_.path() + " -ltlslib -ldl -Wl,-rpath," + dir_.path());
  }
  std::string program() const { return dir_.file("program"); }
  std::string library() const { return dir_.file("libtlslib.so"); }
  std::string opened() const { return dir_.file("libtlsopened.so"); }

 private:
  TempDir dir_;
};

// Runs `command` and reads what it printed.
class Running {
 public:
  explicit Running(const std::string& command) : running_(command) {
    printed_ = {.pid = static_cast<int>(running_.pid()),
                .thread_pointer = running_.number(1),
                .lib_var = running_.number(2),
                .exe_var = running_.number(3),
                .opened_var = running_.number(4)};
  }
  const Printed& printed() const { return printed_; }

 private:
  incise::testing::RunningProgram running_;
  Printed printed_;
};

TEST(TlsLocator, ALibraryLoadedAtStartAndTheExecutableHaveTheirVariablesWhereTheThreadSees) {
  TlsPrograms programs;
  Running running(programs.program());
  const Printed& printed = running.printed();
  ASSERT_GT(printed.pid, 0);
  Result<TlsLocation> library =
      locateTlsVariable(static_cast<uint32_t>(printed.pid), programs.library(), "lib_var");
  ASSERT_TRUE(library) << library.error().message();
  EXPECT_EQ(library->module, 0u);
  EXPECT_EQ(printed.thread_pointer + static_cast<uint64_t>(library->offset), printed.lib_var);
  Result<TlsLocation> own =
      locateTlsVariable(static_cast<uint32_t>(printed.pid), programs.program(), "exe_var");
  ASSERT_TRUE(own) << own.error().message();
  EXPECT_EQ(own->module, 0u);
  EXPECT_EQ(printed.thread_pointer + static_cast<uint64_t>(own->offset), printed.exe_var);
}

TEST(TlsLocator, AStaticExecutablesVariableIsWhereTheThreadSeesIt) {
  TempDir dir;
  const std::string program = testing::compileC(dir, "static_tls", R"(
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
__thread char pad = 1;
_Alignas(32) __thread long value = 2;
int main(void) {
  uintptr_t tp;
  __asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
  printf("%d %lu %lu 0 0\n", (int)getpid(), (unsigned long)tp, (unsigned long)&value);
  fflush(stdout);
  sleep(60);
  return pad + (int)value;
})",
                                                "-static");
  Running running(program);
  const Printed& printed = running.printed();
  ASSERT_GT(printed.pid, 0);
  Result<TlsLocation> location =
      locateTlsVariable(static_cast<uint32_t>(printed.pid), program, "value");
  ASSERT_TRUE(location) << location.error().message();
  EXPECT_EQ(printed.thread_pointer + static_cast<uint64_t>(location->offset), printed.lib_var);
}

// The dlopen'd library's variable, followed as the BPF program follows it:
// the thread's DTV pointer, the module's entry, the block plus the offset.
TEST(TlsLocator, ALibraryOpenedWithDlopenIsReachedThroughTheThreadsDtv) {
  TlsPrograms programs;
  Running running(programs.program() + " " + programs.opened());
  const Printed& printed = running.printed();
  ASSERT_GT(printed.pid, 0);
  ASSERT_NE(printed.opened_var, 0u);
  Result<TlsLocation> location =
      locateTlsVariable(static_cast<uint32_t>(printed.pid), programs.opened(), "opened_var");
  ASSERT_TRUE(location) << location.error().message();
  ASSERT_GT(location->module, 1u);  // the executable is module 1
  std::ifstream memory("/proc/" + std::to_string(printed.pid) + "/mem", std::ios::binary);
  auto word = [&](uint64_t address) {
    uint64_t value = 0;
    memory.seekg(static_cast<std::streamoff>(address));
    memory.read(reinterpret_cast<char*>(&value), sizeof value);
    return value;
  };
  const uint64_t dtv = word(printed.thread_pointer + location->dtv_offset);
  ASSERT_NE(dtv, 0u);
  EXPECT_GE(word(dtv - CONTEXT_DTV_ENTRY_BYTES), location->module);  // dtv[-1]: its entries
  const uint64_t block = word(dtv + uint64_t{location->module} * CONTEXT_DTV_ENTRY_BYTES);
  EXPECT_EQ(block + static_cast<uint64_t>(location->offset), printed.opened_var);
  EXPECT_EQ(word(printed.opened_var), 5u);  // opened_var's initial value
}

TEST(TlsLocator, AMissingVariableOrProcessIsNamed) {
  TlsPrograms programs;
  Running running(programs.program());
  ASSERT_GT(running.printed().pid, 0);
  const auto pid = static_cast<uint32_t>(running.printed().pid);
  Result<TlsLocation> missing = locateTlsVariable(pid, programs.library(), "no_such_var");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("'no_such_var' is not a symbol of"), std::string::npos)
      << missing.error().message();
  Result<TlsLocation> not_loaded = locateTlsVariable(pid, programs.opened(), "opened_var");
  ASSERT_FALSE(not_loaded);
  EXPECT_NE(not_loaded.error().message().find("not among the ones its dynamic loader loaded"),
            std::string::npos)
      << not_loaded.error().message();
}

}  // namespace
}  // namespace incise::recorder
