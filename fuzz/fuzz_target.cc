// A libFuzzer target: compiled once per entry with INCISE_FUZZ_ENTRY set to
// its function (see CMakeLists.txt), linked with -fsanitize=fuzzer.
//
//   build-fuzz/fuzz/trace_reader_fuzzer -max_total_time=600 corpus-dir fuzz/corpus/trace_reader
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return incise::fuzz::INCISE_FUZZ_ENTRY(data, size);
}
