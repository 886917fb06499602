// incise-record: parse the command line, then record (record_session.h).
#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <iostream>

#include "recorder/options.h"
#include "recorder/record_session.h"

namespace {

int printLibbpf(enum libbpf_print_level, const char* format, va_list args) {
  return std::vfprintf(stderr, format, args);
}

int quietLibbpf(enum libbpf_print_level, const char*, va_list) {
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace incise::recorder;
  auto parsed = parseCommandLine(argc, argv);
  if (!parsed) {
    std::cerr << "incise-record: " << parsed.error().message() << "\nTry 'incise-record --help'.\n";
    return 2;
  }
  if (parsed->help) {
    std::cout << helpText();
    return 0;
  }
  libbpf_set_print(parsed->config.verbose ? printLibbpf : quietLibbpf);
  return runRecording(parsed->config);
}
