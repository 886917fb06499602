#include "analyzer/symbolize/source_lines.h"

#include <elfutils/libdw.h>

namespace incise::analyzer {

struct SourceLines::State {
  UniqueFd fd;
  Dwarf* dwarf = nullptr;
  ~State() {
    if (dwarf != nullptr) dwarf_end(dwarf);
  }
};

SourceLines::SourceLines(std::unique_ptr<State> state) : state_(std::move(state)) {}
SourceLines::~SourceLines() = default;

std::unique_ptr<SourceLines> SourceLines::open(UniqueFd fd) {
  if (!fd) return nullptr;
  auto state = std::make_unique<State>();
  state->dwarf = dwarf_begin(fd.get(), DWARF_C_READ);
  state->fd = std::move(fd);
  if (state->dwarf == nullptr) return nullptr;
  return std::unique_ptr<SourceLines>(new SourceLines(std::move(state)));
}

std::optional<SourceLine> SourceLines::find(uint64_t vaddr) const {
  Dwarf_Die unit;
  if (dwarf_addrdie(state_->dwarf, vaddr, &unit) == nullptr) return std::nullopt;
  Dwarf_Line* line = dwarf_getsrc_die(&unit, vaddr);
  if (line == nullptr) return std::nullopt;
  const char* file = dwarf_linesrc(line, nullptr, nullptr);
  int number = 0;
  if (file == nullptr || dwarf_lineno(line, &number) != 0 || number <= 0) return std::nullopt;
  return SourceLine{file, static_cast<uint32_t>(number)};
}

}  // namespace incise::analyzer
