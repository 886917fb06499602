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

}  // namespace testing
}  // namespace incise::analyzer
