// SourceLines: ELF address -> source file and line, from the DWARF line
// table (.debug_line) of a local file: a separate debug file or a binary
// built with -g, as DebugFileFinder found it. Traces carry no line tables,
// so lines exist only where such a file is on the analysis host.
//
// The file is read through the descriptor it was found by (never reopened by
// name), with libdw; a file without DWARF gives no SourceLines.
//
//   std::unique_ptr<SourceLines> lines = SourceLines::open(std::move(fd));
//   if (std::optional<SourceLine> at = lines->find(vaddr)) print(at->file, at->line);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/unique_fd.h"

namespace incise::analyzer {

struct SourceLine {
  std::string file;  // as the compiler recorded it: absolute, or relative to the build
  uint32_t line = 0;
};

class SourceLines {
 public:
  // Null when the file has no DWARF line information.
  static std::unique_ptr<SourceLines> open(UniqueFd fd);
  ~SourceLines();
  SourceLines(const SourceLines&) = delete;
  SourceLines& operator=(const SourceLines&) = delete;

  std::optional<SourceLine> find(uint64_t vaddr) const;

 private:
  struct State;
  explicit SourceLines(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace incise::analyzer
