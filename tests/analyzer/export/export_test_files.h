// Runs `incise export` into a temporary file and reads the result back, for
// the export tests.
//
//   ExportedFile file("pprof");
//   ASSERT_EQ(file.run(trace_path), 0);
//   std::string bytes = file.contents();
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer {

int runExport(const std::vector<std::string>& args);

namespace testing {

class ExportedFile {
 public:
  explicit ExportedFile(std::string format) : format_(std::move(format)) {
    char pattern[] = "/tmp/incise-export-XXXXXX";
    int fd = mkstemp(pattern);
    if (fd >= 0) close(fd);
    path_ = pattern;
  }
  ~ExportedFile() { unlink(path_.c_str()); }
  ExportedFile(const ExportedFile&) = delete;
  ExportedFile& operator=(const ExportedFile&) = delete;

  int run(const std::string& trace, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {trace, "--format", format_, "-o", path_};
    args.insert(args.end(), extra.begin(), extra.end());
    return runExport(args);
  }
  std::string contents() const {
    std::ifstream in(path_, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  const std::string& path() const { return path_; }

 private:
  std::string format_;
  std::string path_;
};

// A trace of -e page-faults: thread 101 has two samples of touch <- main
// whose periods are 7 and 2 faults.
inline Result<std::string> writePageFaultTrace(TraceBuilder& trace) {
  trace.setSampleEvent("page-faults");
  trace.thread(101, "worker");
  uint64_t stack = trace.stack({"touch", "main"});
  trace.sample(1000, 101, stack, 0, 7);
  trace.sample(2000, 101, stack, 0, 2);
  return trace.write();
}

}  // namespace testing
}  // namespace incise::analyzer
