// Shared by the lock and page-fault integration tests: run incise-record on
// a bundled workload, parse the workload's key=value output, read rows back.
//
//   INCISE_REQUIRE_BPF();   // skip (or fail under CI=true) without root/BTF
//   Recording run = record({"--locks", "all"}, {LOCK_STORY, "--threads", "4"});
//   ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
//   uint64_t n = run.value("critical_sections");
//   std::vector<format::LockInterval> rows = run.rows<format::LockInterval>();
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "format/reader.h"

namespace incise::testing {

// Why this machine cannot run BPF tests, or "" when it can.
inline std::string bpfUnavailableReason() {
  if (geteuid() != 0) return "needs root (CAP_BPF, CAP_PERFMON)";
  if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) return "kernel has no BTF";
  return "";
}

inline bool inCi() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

#define INCISE_REQUIRE_BPF()                                                           \
  do {                                                                                 \
    std::string why = ::incise::testing::bpfUnavailableReason();                       \
    if (!why.empty()) {                                                                \
      if (::incise::testing::inCi()) FAIL() << "CI=true and BPF unavailable: " << why; \
      GTEST_SKIP() << why;                                                             \
    }                                                                                  \
  } while (0)

inline std::string shellQuote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

inline std::string readWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Recording {
  int exit_code = -1;
  std::string trace_path;
  std::string workload_stdout;  // the recorded command's key=value lines
  std::string recorder_stderr;
  std::map<std::string, std::string> values;

  bool has(const std::string& key) const { return values.count(key) != 0; }
  uint64_t value(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? 0 : std::stoull(it->second, nullptr, 0);
  }
  std::vector<uint64_t> list(const std::string& key) const {
    std::vector<uint64_t> out;
    auto it = values.find(key);
    if (it == values.end()) return out;
    std::stringstream items(it->second);
    std::string item;
    while (std::getline(items, item, ',')) out.push_back(std::stoull(item, nullptr, 0));
    return out;
  }

  // Every row of one kind, in file order; an empty vector (and a test
  // failure) when the trace cannot be read.
  template <typename Row>
  std::vector<Row> rows() const {
    std::vector<Row> out;
    auto reader = format::Reader::open(trace_path);
    EXPECT_TRUE(reader) << (reader ? "" : reader.error().message());
    if (!reader) return out;
    for (const format::ChunkRef& ref : (*reader)->chunks(Row::kKind)) {
      auto chunk = (*reader)->readChunk(ref, format::ColumnSet::all());
      EXPECT_TRUE(chunk) << (chunk ? "" : chunk.error().message());
      if (!chunk) continue;
      for (size_t i = 0; i < chunk->rows(); ++i) out.push_back(chunk->template row<Row>(i));
    }
    return out;
  }
};

// Runs `incise-record OPTIONS -o TMP -- COMMAND...` and waits for it.
inline Recording record(const std::vector<std::string>& options,
                        const std::vector<std::string>& command) {
  static int counter = 0;
  std::string base = std::filesystem::temp_directory_path() /
                     ("incise_locks_" + std::to_string(getpid()) + "_" + std::to_string(++counter));
  Recording run;
  run.trace_path = base + ".trace";
  std::string line = shellQuote(INCISE_RECORD_BIN);
  for (const auto& option : options) line += " " + shellQuote(option);
  line += " -o " + shellQuote(run.trace_path) + " --";
  for (const auto& word : command) line += " " + shellQuote(word);
  line += " >" + shellQuote(base + ".out") + " 2>" + shellQuote(base + ".err");
  int status = std::system(line.c_str());
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.workload_stdout = readWholeFile(base + ".out");
  run.recorder_stderr = readWholeFile(base + ".err");
  std::filesystem::remove(base + ".out");
  std::filesystem::remove(base + ".err");
  std::stringstream lines(run.workload_stdout);
  std::string kv;
  while (std::getline(lines, kv)) {
    size_t eq = kv.find('=');
    if (eq != std::string::npos) run.values[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return run;
}

// Removes the trace when the test ends.
struct TraceCleanup {
  std::string path;
  ~TraceCleanup() {
    if (!path.empty()) std::filesystem::remove(path);
  }
};

}  // namespace incise::testing
