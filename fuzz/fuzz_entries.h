// The functions the fuzzers call, one per parser that reads untrusted bytes.
//
// Each takes the fuzzer's input and must return 0 without crashing, leaking,
// hanging or touching memory it does not own, whatever the bytes are. The
// libFuzzer targets (fuzz_target.cc, built with -DINCISE_FUZZ=ON and clang)
// and the regression test (regression_test.cc, in every build, label unit)
// both call them, so a committed crasher replays exactly what the fuzzer ran.
//
// fuzzTraceReader's input is one mode byte, then a trace file. Mode bit 0
// set: before the file is read, every block header found by walking the
// blocks gets its header and payload checksums recomputed, so mutations reach
// the Cap'n Proto, chunk and codec decoders instead of dying at a checksum.
// Mode bit 0 clear: the bytes are read as they are (checksums, recovery).
//
//   int rc = fuzz::fuzzTraceReader(bytes.data(), bytes.size());
//   const fuzz::FuzzEntry* entry = fuzz::findEntry("perf_map");
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace incise::fuzz {

int fuzzTraceReader(const uint8_t* data, size_t size);
int fuzzPerfMap(const uint8_t* data, size_t size);
int fuzzKallsyms(const uint8_t* data, size_t size);
int fuzzElfImage(const uint8_t* data, size_t size);
int fuzzEhFrame(const uint8_t* data, size_t size);
// One mode byte (numbers, --time, selector, incise-record's argv, a
// report's argv), then text; argv words are separated by NUL bytes.
int fuzzCliParsers(const uint8_t* data, size_t size);

// Recomputes the checksums of every block header found walking `file` from
// its first block (see fuzzTraceReader); returns the blocks fixed.
size_t fixBlockChecksums(std::string& file);

struct FuzzEntry {
  std::string_view name;  // the folder under fuzz/corpus and fuzz/regressions
  int (*run)(const uint8_t* data, size_t size);
};

// Every entry, in one list.
std::span<const FuzzEntry> fuzzEntries();
const FuzzEntry* findEntry(std::string_view name);

}  // namespace incise::fuzz
