#include "objfile/tls_variable.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "tests/objfile/elf_test_files.h"

namespace incise::objfile {
namespace {

using testing::compileC;
using testing::TempDir;

// Thread-local variables of different sizes and alignments (a 64-byte
// aligned one rounds the block), each printed as its distance below the
// thread pointer (%fs:0 holds the thread pointer itself), read by the
// program itself in its main thread and in a second thread.
const char* kTlsSource = R"(
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
__thread char pad_var = 1;
__thread int small_var = 7;
_Alignas(64) __thread unsigned long long wide_var = 3;
__thread short tiny_var;
int global_var = 5;
static void print_distances(void) {
  uintptr_t tp;
  __asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
  printf("%lu %lu %lu %lu\n", (unsigned long)(tp - (uintptr_t)&pad_var),
         (unsigned long)(tp - (uintptr_t)&small_var), (unsigned long)(tp - (uintptr_t)&wide_var),
         (unsigned long)(tp - (uintptr_t)&tiny_var));
}
static void* thread_main(void* arg) { (void)arg; print_distances(); return 0; }
int main(void) {
  pthread_t thread;
  print_distances();
  pthread_create(&thread, 0, thread_main, 0);
  pthread_join(thread, 0);
  return pad_var + small_var + (int)wide_var + tiny_var + global_var == 16 ? 0 : 1;
}
)";

// The distances the program printed, one line per thread.
std::vector<std::vector<uint64_t>> runAndReadDistances(const std::string& program) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(program.c_str(), "r"), pclose);
  std::vector<std::vector<uint64_t>> lines;
  if (!pipe) return lines;
  char line[512];
  while (fgets(line, sizeof line, pipe.get()) != nullptr) {
    std::istringstream fields(line);
    std::vector<uint64_t> distances;
    for (uint64_t value = 0; fields >> value;) distances.push_back(value);
    lines.push_back(distances);
  }
  return lines;
}

void expectLayoutMatchesTheProgram(const std::string& program) {
  const std::vector<std::vector<uint64_t>> printed = runAndReadDistances(program);
  ASSERT_EQ(printed.size(), 2u) << program;
  const char* names[] = {"pad_var", "small_var", "wide_var", "tiny_var"};
  const uint64_t sizes[] = {1, 4, 8, 2};
  for (size_t i = 0; i < 4; ++i) {
    Result<TlsVariable> variable = findTlsVariable(program, names[i]);
    ASSERT_TRUE(variable) << variable.error().message();
    EXPECT_EQ(variable->size, sizes[i]) << names[i];
    EXPECT_EQ(variable->block_align, 64u) << names[i];
    for (const std::vector<uint64_t>& thread : printed) {
      ASSERT_EQ(thread.size(), 4u);
      EXPECT_EQ(variable->executableBlockOffset() - variable->offset, thread[i])
          << names[i] << " in " << program;
    }
  }
}

TEST(TlsVariable, APieExecutablesVariablesAreWhereItsThreadsFindThem) {
  TempDir dir;
  expectLayoutMatchesTheProgram(compileC(dir, "tls_pie", kTlsSource, "-fPIE -pie -pthread"));
}

TEST(TlsVariable, ANonPieExecutablesVariablesAreWhereItsThreadsFindThem) {
  TempDir dir;
  expectLayoutMatchesTheProgram(compileC(dir, "tls_exec", kTlsSource, "-no-pie -pthread"));
}

TEST(TlsVariable, AStaticExecutablesVariablesAreWhereItsThreadsFindThem) {
  TempDir dir;
  expectLayoutMatchesTheProgram(compileC(dir, "tls_static", kTlsSource, "-static -pthread"));
}

TEST(TlsVariable, AStrippedExecutableIsSearchedThroughItsDynamicSymbols) {
  TempDir dir;
  const std::string program =
      compileC(dir, "tls_stripped", kTlsSource, "-fPIE -pie -pthread -rdynamic");
  ASSERT_TRUE(testing::run("strip " + program));
  Result<TlsVariable> variable = findTlsVariable(program, "wide_var");
  ASSERT_TRUE(variable) << variable.error().message();
  EXPECT_EQ(variable->size, 8u);
  EXPECT_EQ(variable->offset % 64, 0u);
}

TEST(TlsVariable, ErrorsNameTheSymbolAndSayWhatIsWrong) {
  TempDir dir;
  const std::string program = compileC(dir, "tls_errors", kTlsSource, "-fPIE -pie -pthread");
  auto message = [&](const std::string& path, const std::string& name) {
    Result<TlsVariable> variable = findTlsVariable(path, name);
    EXPECT_FALSE(variable) << name;
    return variable ? std::string() : variable.error().message();
  };
  EXPECT_NE(message(program, "no_such_var").find("'no_such_var' is not a symbol of"),
            std::string::npos);
  EXPECT_NE(message(program, "global_var").find("a global variable, not a thread-local one"),
            std::string::npos);
  EXPECT_NE(message(program, "main").find("'main' in " + program + " is a function"),
            std::string::npos);
  EXPECT_NE(message(dir.file("missing"), "small_var").find("cannot open"), std::string::npos);
  EXPECT_NE(message(dir.file("tls_errors.c"), "small_var").find("not an ELF file"),
            std::string::npos);
}

TEST(TlsVariable, AVariableOfALibraryIsNotTheExecutablesOwn) {
  TempDir dir;
  compileC(dir, "libtlsvar.so", "__thread int lib_var = 4;", "-shared -fPIC");
  const std::string program = dir.file("tls_user");
  testing::writeFile(
      program + ".c",
      "extern __thread int lib_var; int main(void) { return lib_var == 4 ? 0 : 1; }");
  // The library after the source that uses it.
  ASSERT_TRUE(testing::run("cc -o " + program + " " + program + ".c -L" + dir.path() +
                           " -ltlsvar -Wl,-rpath," + dir.path()));
  Result<TlsVariable> in_program = findTlsVariable(program, "lib_var");
  ASSERT_FALSE(in_program);
  EXPECT_NE(in_program.error().message().find("is not defined in"), std::string::npos)
      << in_program.error().message();
  Result<TlsVariable> in_library = findTlsVariable(dir.file("libtlsvar.so"), "lib_var");
  ASSERT_TRUE(in_library) << in_library.error().message();
  EXPECT_EQ(in_library->size, 4u);
}

}  // namespace
}  // namespace incise::objfile
