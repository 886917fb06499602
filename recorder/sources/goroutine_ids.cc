#include "recorder/sources/goroutine_ids.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "base/unique_fd.h"
#include "objfile/elf_reader.h"
#include "recorder/probes/go_goid_offset.h"
#include "recorder/probes/go_target_executables.h"
#include "recorder/probes/lock_probe_spec.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kWhat = "goroutine ids";
// The symbol as Go 1.17 and later name it (assembly, ABI0), then as before.
constexpr std::string_view kStackCheck[] = {"runtime.stackcheck.abi0", "runtime.stackcheck"};
constexpr size_t kCodeBytes = 16;

int64_t signed32(std::span<const uint8_t> code, size_t at) {
  uint32_t value = uint32_t{code[at]} | uint32_t{code[at + 1]} << 8 | uint32_t{code[at + 2]} << 16 |
                   uint32_t{code[at + 3]} << 24;
  return static_cast<int32_t>(value);
}

}  // namespace

std::optional<int64_t> tlsGOffset(std::span<const uint8_t> code) {
  // mov %fs:disp32,%reg: 64 48 8b /r with mod 00, rm 100 (a SIB byte), SIB
  // 0x25 (no base, no index).
  if (code.size() >= 9 && code[0] == 0x64 && code[1] == 0x48 && code[2] == 0x8b &&
      (code[3] & 0xc7) == 0x04 && code[4] == 0x25)
    return signed32(code, 5);
  // mov $imm32,%reg (48 c7 c0+reg, sign-extended), then mov %fs:(%reg),%reg2
  // (64 48 8b /r with mod 00 and rm = that register).
  if (code.size() >= 11 && code[0] == 0x48 && code[1] == 0xc7 && (code[2] & 0xf8) == 0xc0) {
    uint8_t reg = code[2] & 0x07;
    if (reg != 4 && reg != 5 && code[7] == 0x64 && code[8] == 0x48 && code[9] == 0x8b &&
        (code[10] & 0xc7) == reg)
      return signed32(code, 3);
  }
  return std::nullopt;
}

namespace {

Result<std::optional<go_process>> readGoThreadLayout(const std::string& binary) {
  Result<format::ObjectSymbols> object = objfile::readElfObject(binary);
  if (!object) return object.error().context(std::string(kWhat));
  std::optional<uint64_t> at;
  for (std::string_view name : kStackCheck) {
    if (Result<uint64_t> found = functionFileOffset(*object, name, kWhat)) {
      at = *found;
      break;
    }
  }
  if (!at) return std::optional<go_process>();  // not Go

  uint8_t code[kCodeBytes] = {};
  UniqueFd fd(open(binary.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error(std::string(kWhat) + ": " + binary + ": " + std::strerror(errno));
  ssize_t got = pread(fd.get(), code, sizeof code, static_cast<off_t>(*at));
  std::optional<int64_t> tls_g =
      got == static_cast<ssize_t>(sizeof code) ? tlsGOffset(code) : std::nullopt;
  if (!tls_g)
    return Error(std::string(kWhat) + ": " + binary +
                 ": runtime.stackcheck does not load g from the thread's TLS as expected");
  Result<GoRuntimeOffsets> offsets = goRuntimeOffsets(binary);
  if (!offsets) return offsets.error();
  return std::optional<go_process>(go_process{.tls_g = *tls_g,
                                              .goid_offset = offsets->goid,
                                              .g_m_offset = offsets->g_m,
                                              .m_curg_offset = offsets->m_curg});
}

}  // namespace

Result<std::optional<go_process>> goThreadLayout(const std::string& binary) {
  // Every source asks, for every target executable: one read per file.
  struct FileKey {
    dev_t device;
    ino_t inode;
    int64_t modified_ns;
    auto operator<=>(const FileKey&) const = default;
  };
  static std::mutex mutex;
  static std::map<FileKey, Result<std::optional<go_process>>> layouts;
  struct stat info {};
  if (stat(binary.c_str(), &info) != 0)
    return Error(std::string(kWhat) + ": " + binary + ": " + std::strerror(errno));
  FileKey key{info.st_dev, info.st_ino,
              int64_t{info.st_mtim.tv_sec} * 1'000'000'000 + info.st_mtim.tv_nsec};
  std::lock_guard<std::mutex> lock(mutex);
  auto found = layouts.find(key);
  if (found == layouts.end()) found = layouts.emplace(key, readGoThreadLayout(binary)).first;
  return found->second;
}

Status GoroutineIds::fill(int map_fd) const {
  for (const auto& [pid, layout] : processes) {
    if (bpf_map_update_elem(map_fd, &pid, &layout, BPF_ANY) != 0)
      return Error(std::string(kWhat) + ": add pid " + std::to_string(pid) + ": " +
                   std::strerror(errno));
  }
  return Status::ok();
}

GoroutineIds findGoroutineIds(const RecordConfig& config, const std::vector<uint32_t>& pids) {
  GoroutineIds ids;
  size_t exited = 0;
  for (const TargetExecutable& target : targetExecutables(config)) {
    Result<std::optional<go_process>> layout = goThreadLayout(target.path);
    if (!layout && targetExited(target)) {
      exited += target.pids.size();
    } else if (!layout) {
      ids.notes.push_back(layout.error().message() + ": CPU samples carry no goroutine ids");
    }
    if (!layout) continue;
    if (!*layout) continue;
    // -- CMD: the one child the launcher made runs the program.
    for (uint32_t pid : target.pids.empty() ? pids : target.pids)
      ids.processes.emplace_back(pid, **layout);
    if (ids.processes.size() > MAX_GO_PROCESSES) ids.processes.resize(MAX_GO_PROCESSES);
  }
  if (exited > 0) {
    ids.notes.push_back(std::string(kWhat) + ": " + std::to_string(exited) +
                        " processes exited before their executables were read");
  }
  return ids;
}

bool goProgramsMayStart(const RecordConfig& config) {
  return config.target_kind == TargetKind::kAll || config.target_kind == TargetKind::kCgroup;
}

void goroutineIdsOnExec(int map_fd, uint32_t pid) {
  Result<std::optional<go_process>> layout =
      goThreadLayout("/proc/" + std::to_string(pid) + "/exe");
  // A full map refuses the update: that program's samples carry no ids.
  if (layout && *layout)
    bpf_map_update_elem(map_fd, &pid, &**layout, BPF_ANY);
  else
    bpf_map_delete_elem(map_fd, &pid);  // the pid's earlier image may have been Go
}

void followGoPrograms(ProcessTracker& processes, int map_fd) {
  processes.addExecListener([map_fd](uint32_t pid) { goroutineIdsOnExec(map_fd, pid); });
  processes.addExitListener([map_fd](uint32_t pid) { bpf_map_delete_elem(map_fd, &pid); });
}

}  // namespace incise::recorder
