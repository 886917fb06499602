// `incise record ...` runs incise-record from the same directory as `incise`,
// else from the build tree's layout (build/analyzer/incise beside
// build/recorder/incise-record), else from PATH, so one command name covers
// the whole workflow. The analyzer
// itself never loads BPF: it must run where BPF does not exist.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "analyzer/cli/command.h"

namespace incise::analyzer {

int runRecord(const std::vector<std::string>& args) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> candidates;
  if (!ec) {
    candidates.push_back((self.parent_path() / "incise-record").string());
    candidates.push_back(
        (self.parent_path().parent_path() / "recorder" / "incise-record").string());
  }
  std::vector<char*> argv;
  std::string name = "incise-record";
  argv.push_back(name.data());
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& candidate : candidates) {
    if (access(candidate.c_str(), X_OK) == 0) execv(candidate.c_str(), argv.data());
  }
  execvp("incise-record", argv.data());
  std::cerr << "incise record: cannot run incise-record: " << std::strerror(errno)
            << " (it is built with the recorder; is it installed next to incise or on PATH?)\n";
  return 1;
}

}  // namespace incise::analyzer
