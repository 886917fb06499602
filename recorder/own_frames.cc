#include "recorder/own_frames.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>

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
  std::FILE* file = std::fopen(kallsyms_path.c_str(), "re");
  if (!file) return own;
  // Lines are "ADDRESS TYPE NAME [MODULE]"; a glue function ends where the
  // next symbol in the file begins (core kernel text is listed in order).
  char line[512];
  uint64_t open_start = 0;
  bool open = false;
  while (std::fgets(line, sizeof(line), file)) {
    unsigned long long address = 0;
    char type = 0;
    char name[256];
    if (std::sscanf(line, "%llx %c %255s", &address, &type, name) != 3) continue;
    if (open) {
      if (address > open_start) own.addGlueRange(open_start, address);
      open = false;
    }
    if (address == 0 || (type != 't' && type != 'T')) continue;
    if (isTracingGlue(name)) {
      open_start = address;
      open = true;
    }
  }
  std::fclose(file);
  return own;
}

void OwnFrames::addPrograms(const bpf_object* object) {
  if (!object) return;
  bpf_program* program = nullptr;
  bpf_object__for_each_program(program, object) {
    int fd = bpf_program__fd(program);
    if (fd < 0) continue;  // not loaded (the other variant of a hook)
    bpf_prog_info info{};
    uint32_t length = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &length) != 0 || info.nr_jited_ksyms == 0) continue;
    const uint32_t count = std::min(info.nr_jited_ksyms, info.nr_jited_func_lens);
    std::vector<uint64_t> starts(count);
    std::vector<uint32_t> lengths(count);
    bpf_prog_info detail{};
    detail.nr_jited_ksyms = count;
    detail.nr_jited_func_lens = count;
    detail.jited_ksyms = reinterpret_cast<uintptr_t>(starts.data());
    detail.jited_func_lens = reinterpret_cast<uintptr_t>(lengths.data());
    length = sizeof(detail);
    if (bpf_obj_get_info_by_fd(fd, &detail, &length) != 0) continue;
    for (uint32_t i = 0; i < count; ++i) addProgramRange(starts[i], starts[i] + lengths[i]);
  }
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
