// Test support: builds real ELF files at test time with the compiler on PATH
// (cc), so the ELF reader and the symbolizer are checked against what the
// toolchain really produces, and reads `nm` as an independent opinion.
//
//   TempDir dir;
//   std::string exe = compileC(dir, "pie", "int hot(void){return 1;} int main(){return hot();}",
//                              "-fPIE -pie");
//   uint64_t address = nmAddress(exe, "hot");
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace incise::testing {

// A fresh directory under $TMPDIR, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "incise-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void writeFile(const std::string& path, const std::string& contents) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << contents;
}

inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Runs a shell command; fails the current test (and returns false) if it exits non-zero.
inline bool run(const std::string& command) {
  const int status = std::system((command + " 2>&1").c_str());
  EXPECT_EQ(status, 0) << "command failed: " << command;
  return status == 0;
}

// Compiles `source` (C) into `dir/name` with `flags`; returns the output path.
inline std::string compileC(const TempDir& dir, const std::string& name, const std::string& source,
                            const std::string& flags) {
  const std::string source_path = dir.file(name + ".c");
  const std::string output = dir.file(name);
  writeFile(source_path, source);
  run("cc -O1 -g -fno-inline -Wl,--build-id=sha1 " + flags + " -o " + output + " " + source_path);
  return output;
}

// The address `nm` gives for `symbol` in `path`, or 0 if nm does not list it.
inline uint64_t nmAddress(const std::string& path, const std::string& symbol) {
  const std::string command = "nm -P " + path + " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return 0;
  char line[4096];
  while (fgets(line, sizeof line, pipe.get()) != nullptr) {
    std::istringstream fields(line);
    std::string name, type, address;
    fields >> name >> type >> address;
    if (name == symbol && !address.empty()) return std::stoull(address, nullptr, 16);
  }
  return 0;
}

// A C program with three functions that the tests look for by name.
inline const char* kThreeFunctionsSource = R"(
#include <stdio.h>
__attribute__((noinline)) int incise_alpha(int x) { return x * 3 + 1; }
__attribute__((noinline)) int incise_beta(int x) {
  int total = 0;
  for (int i = 0; i < x; ++i) total += incise_alpha(i) ^ (i << 2);
  return total;
}
__attribute__((noinline)) int incise_gamma(int x) { return incise_beta(x) - incise_alpha(x); }
int main(int argc, char** argv) { (void)argv; printf("%d\n", incise_gamma(argc)); return 0; }
)";

}  // namespace incise::testing
