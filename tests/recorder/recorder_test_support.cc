#include "tests/recorder/recorder_test_support.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace incise::testing {

bool runningInCi() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

std::string recordingUnavailableReason() {
  if (geteuid() != 0) return "integration tests need root (BPF programs and perf events)";
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) return "the kernel has no BTF";
  return "";
}

std::string cgroup2Mount() {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, point, type;
  while (mounts >> device >> point >> type) {
    std::string rest;
    std::getline(mounts, rest);
    if (type == "cgroup2") return point;
  }
  return "";
}

std::string tempTracePath(const std::string& name) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("incise-recorder-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::path path = dir / name;
  std::filesystem::remove(path);
  return path.string();
}

TraceView::TraceView(const std::string& path) {
  auto reader = format::Reader::open(path);
  if (!reader) {
    error_ = reader.error().message();
    return;
  }
  reader_ = reader.take();
}

std::string TraceView::symbolize(uint32_t pid, uint64_t address) const {
  const format::Metadata& meta = reader_->metadata();
  // The newest mapping of `pid` that holds the address (maps are re-read after exec).
  const format::Mapping* mapping = nullptr;
  for (const auto& m : meta.mappings)
    if (m.pid == pid && m.start <= address && address < m.end) mapping = &m;
  if (!mapping) return "";
  uint64_t file_offset = address - mapping->start + mapping->file_offset;
  for (const auto& object : meta.objects) {
    bool same = mapping->build_id.empty() ? object.path == mapping->path
                                          : object.build_id == mapping->build_id;
    if (!same) continue;
    for (const auto& segment : object.segments) {
      if (file_offset < segment.file_offset ||
          file_offset >= segment.file_offset + segment.file_size)
        continue;
      uint64_t vaddr = file_offset - segment.file_offset + segment.vaddr;
      const format::Symbol* best = nullptr;
      for (const auto& symbol : object.symbols)
        if (symbol.address <= vaddr && (!best || symbol.address > best->address)) best = &symbol;
      if (best && (best->size == 0 || vaddr < best->address + best->size)) return best->name;
      return "";
    }
  }
  return "";
}

std::string TraceView::leafUserFunction(uint32_t pid, uint64_t stack_id) const {
  for (uint64_t frame : reader_->stacks().frames(stack_id)) {
    if (format::isKernelAddress(frame)) continue;
    return symbolize(pid, frame);
  }
  return "";
}

std::string TraceView::leafUserMapping(uint32_t pid, uint64_t stack_id) const {
  for (uint64_t frame : reader_->stacks().frames(stack_id)) {
    if (format::isKernelAddress(frame)) continue;
    const format::Mapping* mapping = nullptr;
    for (const auto& m : reader_->metadata().mappings)
      if (m.pid == pid && m.start <= frame && frame < m.end) mapping = &m;
    return mapping ? mapping->path : "";
  }
  return "";
}

bool TraceView::stackHasFunction(uint32_t pid, uint64_t stack_id, const std::string& name) const {
  for (uint64_t frame : reader_->stacks().frames(stack_id))
    if (!format::isKernelAddress(frame) && symbolize(pid, frame) == name) return true;
  return false;
}

}  // namespace incise::testing
