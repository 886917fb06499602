#include "recorder/metadata/own_frames.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "recorder/loaded_programs.h"

namespace incise::recorder {

namespace {

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

bool OwnFrames::isTracingGlue(std::string_view name) {
  // raw_tp / tp_btf: __traceiter_X -> __bpf_trace_X -> bpf_trace_runN -> program.
  // Perf tracepoints (syscalls:*): perf_syscall_enter/exit or perf_trace_X
  // -> perf_trace_run_bpf_submit -> trace_call_bpf -> program.
  return startsWith(name, "bpf_trace_run") || startsWith(name, "__bpf_trace_") ||
         startsWith(name, "__traceiter_") || name == "trace_call_bpf" ||
         name == "perf_trace_run_bpf_submit" || name == "perf_syscall_enter" ||
         name == "perf_syscall_exit" || startsWith(name, "perf_trace_") ||
         startsWith(name, "bpf_prog_run");
}

OwnFrames OwnFrames::read(const std::string& kallsyms_path) {
  OwnFrames own;
  UniqueFd fd(open(kallsyms_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return own;
  // Lines are "ADDRESS TYPE NAME[\tMODULE]"; a glue function ends where the
  // next symbol in the file begins (core kernel text is listed in order).
  // Parsed by hand: 120k lines through sscanf cost more than the kernel
  // takes to write them.
  std::vector<char> buffer(1u << 20);
  size_t held = 0;
  uint64_t open_start = 0;
  bool open_range = false;
  auto line = [&](std::string_view text) {
    uint64_t address = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), address, 16);
    if (ec != std::errc() || end + 3 > text.data() + text.size() || end[0] != ' ' || end[2] != ' ')
      return;
    const char type = end[1];
    std::string_view name(end + 3, static_cast<size_t>(text.data() + text.size() - (end + 3)));
    name = name.substr(0, name.find('\t'));
    if (open_range) {
      if (address > open_start) own.addGlueRange(open_start, address);
      open_range = false;
    }
    if (address == 0 || (type != 't' && type != 'T') || !isTracingGlue(name)) return;
    open_start = address;
    open_range = true;
  };
  for (;;) {
    ssize_t got = ::read(fd.get(), buffer.data() + held, buffer.size() - held);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    held += static_cast<size_t>(got);
    size_t at = 0;
    while (const void* newline = std::memchr(buffer.data() + at, '\n', held - at)) {
      const size_t stop = static_cast<size_t>(static_cast<const char*>(newline) - buffer.data());
      line(std::string_view(buffer.data() + at, stop - at));
      at = stop + 1;
    }
    std::memmove(buffer.data(), buffer.data() + at, held - at);
    held -= at;
    if (held == buffer.size()) held = 0;  // a line longer than the buffer: not kallsyms
  }
  return own;
}

void OwnFrames::addPrograms(const bpf_object* object) {
  forEachLoadedProgram(object, [this](const bpf_program*, int fd, const bpf_prog_info& info) {
    if (info.nr_jited_ksyms == 0) return;
    const uint32_t count = std::min(info.nr_jited_ksyms, info.nr_jited_func_lens);
    std::vector<uint64_t> starts(count);
    std::vector<uint32_t> lengths(count);
    bpf_prog_info detail{};
    detail.nr_jited_ksyms = count;
    detail.nr_jited_func_lens = count;
    detail.jited_ksyms = reinterpret_cast<uintptr_t>(starts.data());
    detail.jited_func_lens = reinterpret_cast<uintptr_t>(lengths.data());
    uint32_t length = sizeof(detail);
    if (bpf_obj_get_info_by_fd(fd, &detail, &length) != 0) return;
    for (uint32_t i = 0; i < count; ++i) addProgramRange(starts[i], starts[i] + lengths[i]);
  });
}

void OwnFrames::finish() {
  programs_.finish();
  glue_.finish();
}

void OwnFrames::Ranges::add(uint64_t start, uint64_t end) {
  if (end > start) ranges_.emplace_back(start, end);
}

void OwnFrames::Ranges::finish() {
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& range : ranges_) {
    if (!merged.empty() && range.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, range.second);
    } else {
      merged.push_back(range);
    }
  }
  ranges_ = std::move(merged);
  lowest_ = ranges_.empty() ? UINT64_MAX : ranges_.front().first;
  highest_ = ranges_.empty() ? 0 : ranges_.back().second;
}

bool OwnFrames::Ranges::contains(uint64_t address) const {
  if (address < lowest_ || address >= highest_) return false;
  auto after = std::upper_bound(
      ranges_.begin(), ranges_.end(), address,
      [](uint64_t a, const std::pair<uint64_t, uint64_t>& range) { return a < range.first; });
  return after != ranges_.begin() && address < (after - 1)->second;
}

}  // namespace incise::recorder
