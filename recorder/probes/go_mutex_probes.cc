#include "recorder/probes/go_mutex_probes.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "objfile/elf_reader.h"
#include "recorder/probes/lock_probe_spec.h"

namespace incise::recorder {
namespace {

constexpr std::string_view kWhat = "go mutex";
// lockSlow is under 1 KiB in every Go release; a symbol claiming more than
// this is not the function expected.
constexpr uint64_t kMaxFunctionBytes = 64 * 1024;

bool bytesAt(std::span<const uint8_t> code, size_t at, std::initializer_list<uint8_t> bytes) {
  if (at + bytes.size() > code.size()) return false;
  size_t i = at;
  for (uint8_t b : bytes) {
    if (code[i++] != b) return false;
  }
  return true;
}

uint32_t le32(std::span<const uint8_t> code, size_t at) {
  return uint32_t{code[at]} | uint32_t{code[at + 1]} << 8 | uint32_t{code[at + 2]} << 16 |
         uint32_t{code[at + 3]} << 24;
}

// Where the stack check against g.stackguard0 (0x10(%r14)) ends, or 0 when
// the function does not start with one: `cmp 0x10(%r14),%rsp`, or for large
// frames `lea -X(%rsp),%r12; cmp 0x10(%r14),%r12`.
size_t afterStackCheck(std::span<const uint8_t> code) {
  if (bytesAt(code, 0, {0x49, 0x3b, 0x66, 0x10})) return 4;
  if (bytesAt(code, 0, {0x4c, 0x8d, 0x64, 0x24}) && bytesAt(code, 5, {0x4d, 0x3b, 0x66, 0x10}))
    return 9;
  if (bytesAt(code, 0, {0x4c, 0x8d, 0xa4, 0x24}) && bytesAt(code, 8, {0x4d, 0x3b, 0x66, 0x10}))
    return 12;
  return 0;
}

struct Frame {
  uint32_t size = 0;
  bool pushes_rbp = false;  // Go 1.21+: push %rbp; mov %rsp,%rbp before the sub
};

// The frame the prologue opens, searched in its first bytes (after the
// conditional jump to the stack-growth call).
bool readFrame(std::span<const uint8_t> code, size_t from, Frame& frame) {
  for (size_t at = from; at < from + 16 && at < code.size(); ++at) {
    if (bytesAt(code, at, {0x55, 0x48, 0x89, 0xe5})) {
      frame.pushes_rbp = true;
      at += 3;
      continue;
    }
    if (bytesAt(code, at, {0x48, 0x83, 0xec}) && at + 3 < code.size()) {
      frame.size = code[at + 3];
      return true;
    }
    if (bytesAt(code, at, {0x48, 0x81, 0xec}) && at + 7 <= code.size()) {
      frame.size = le32(code, at + 3);
      return true;
    }
  }
  return false;
}

// The RET offsets of `add $N,%rsp` epilogues, with the rbp restore each Go
// release puts around it.
std::vector<uint64_t> epilogueReturns(std::span<const uint8_t> code, const Frame& frame) {
  std::vector<uint64_t> returns;
  uint32_t n = frame.size;
  for (size_t at = 0; at < code.size(); ++at) {
    size_t ret = 0;
    if (n < 0x80 && bytesAt(code, at, {0x48, 0x83, 0xc4, static_cast<uint8_t>(n)})) {
      ret = at + 4;
    } else if (bytesAt(code, at, {0x48, 0x81, 0xc4}) && at + 7 <= code.size() &&
               le32(code, at + 3) == n) {
      ret = at + 7;
    } else {
      continue;
    }
    if (frame.pushes_rbp) {
      if (bytesAt(code, ret, {0x5d, 0xc3})) returns.push_back(ret + 1);
      continue;
    }
    if (!bytesAt(code, ret, {0xc3})) continue;
    // mov N-8(%rsp),%rbp right before the add: disp8 or disp32.
    uint32_t saved = n - 8;
    bool restored =
        (saved < 0x80 && at >= 5 &&
         bytesAt(code, at - 5, {0x48, 0x8b, 0x6c, 0x24, static_cast<uint8_t>(saved)})) ||
        (at >= 8 && bytesAt(code, at - 8, {0x48, 0x8b, 0xac, 0x24}) && le32(code, at - 4) == saved);
    if (restored) returns.push_back(ret);
  }
  return returns;
}

}  // namespace

Result<std::vector<uint64_t>> goFunctionReturns(std::span<const uint8_t> code) {
  size_t check = afterStackCheck(code);
  if (check == 0)
    return Error("no register-ABI stack check at its start (Go before 1.17, or not Go)");
  Frame frame;
  if (!readFrame(code, check, frame) || frame.size < 8)
    return Error("no frame set-up in its prologue");
  std::vector<uint64_t> returns = epilogueReturns(code, frame);
  if (returns.empty()) return Error("no return that closes its frame");
  return returns;
}

Result<std::optional<GoMutexProbes>> findGoMutexProbes(const std::string& binary) {
  Result<format::ObjectSymbols> object = objfile::readElfObject(binary);
  if (!object) return object.error().context(std::string(kWhat));
  const format::Symbol* lock_slow = nullptr;
  for (const format::Symbol& symbol : object->symbols) {
    if (symbol.name == kGoLockSlow && symbol.address != 0) lock_slow = &symbol;
  }
  if (!lock_slow) return std::optional<GoMutexProbes>();
  if (lock_slow->size == 0 || lock_slow->size > kMaxFunctionBytes)
    return Error(std::string(kWhat) + ": '" + kGoLockSlow + "' in " + binary +
                 " has an implausible size");

  GoMutexProbes probes{.binary = binary};
  Result<uint64_t> entry = functionFileOffset(*object, kGoLockSlow, kWhat);
  if (!entry) return entry.error();
  Result<uint64_t> unlock = functionFileOffset(*object, kGoUnlockSlow, kWhat);
  if (!unlock) return unlock.error();
  probes.lock_slow = *entry;
  probes.unlock_slow = *unlock;

  std::vector<uint8_t> code(lock_slow->size);
  int fd = open(binary.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(std::string(kWhat) + ": " + binary + ": " + std::strerror(errno));
  ssize_t got = pread(fd, code.data(), code.size(), static_cast<off_t>(*entry));
  int error = errno;
  close(fd);
  if (got != static_cast<ssize_t>(code.size()))
    return Error(std::string(kWhat) + ": read '" + kGoLockSlow + "' in " + binary + ": " +
                 (got < 0 ? std::strerror(error) : "short read"));
  Result<std::vector<uint64_t>> returns = goFunctionReturns(code);
  if (!returns)
    return Error(std::string(kWhat) + ": '" + kGoLockSlow + "' in " + binary + ": " +
                 returns.error().message());
  for (uint64_t ret : *returns) probes.lock_slow_returns.push_back(*entry + ret);
  return std::optional<GoMutexProbes>(std::move(probes));
}

}  // namespace incise::recorder
