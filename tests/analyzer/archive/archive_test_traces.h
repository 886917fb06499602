// Small traces with chosen headers (host, command, start, a build-id) and
// a scratch archive directory, for the archive tests.
//
//   ScratchDir dir;
//   std::string path = writeArchiveTrace(dir.path() + "/in", {"db1", {"server"}, 1, "bid1"});
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "format/writer.h"

namespace incise::analyzer::testing {

struct TraceHeader {
  std::string host;
  std::vector<std::string> command;
  uint64_t start_wall_s = 0;
  std::string build_id;  // raw bytes of the app's build-id
  uint64_t samples = 3;
};

inline std::string writeArchiveTrace(const std::string& path, const TraceHeader& h) {
  format::Header header;
  header.host = h.host;
  header.kernel_release = "6.1.0-test";
  header.command_line = h.command;
  header.start_wall_ns = h.start_wall_s * 1'000'000'000;
  header.start_mono_ns = 1'000'000'000;
  header.options.sample_frequency_hz = 99;
  format::WriterOptions options;
  options.background = false;
  auto writer = format::Writer::create(path, header, options);
  if (!writer) return "";
  format::MetadataDelta delta;
  delta.time = header.start_mono_ns;
  format::ObjectSymbols app;
  std::string program = h.command.empty() ? "app" : h.command[0];
  app.path = "/usr/bin/" + program.substr(program.rfind('/') + 1);
  app.build_id = h.build_id;
  delta.objects.push_back(app);
  (*writer)->addMetadata(std::move(delta));
  for (uint64_t i = 0; i < h.samples; ++i) {
    (*writer)->append(format::CpuSample{header.start_mono_ns + i * 1000, 0, 1, 1, 0, 1});
  }
  if (!(*writer)->close(header.start_mono_ns + 2'000'000'000)) return "";
  return path;
}

class ScratchDir {
 public:
  ScratchDir() {
    char pattern[] = "/tmp/incise-archive-XXXXXX";
    path_ = mkdtemp(pattern) ? pattern : "";
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace incise::analyzer::testing
