#include "recorder/probes/go_mutex_probes.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/unique_fd.h"
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

// Past the NOPs the Go assembler pads with before a RET (to keep a jump or
// return off a 32-byte boundary): the one-byte NOP and the multi-byte
// forms of the Intel manual.
size_t afterNops(std::span<const uint8_t> code, size_t at) {
  static const std::initializer_list<uint8_t> kNops[] = {
      {0x90},
      {0x66, 0x90},
      {0x0f, 0x1f, 0x00},
      {0x0f, 0x1f, 0x40, 0x00},
      {0x0f, 0x1f, 0x44, 0x00, 0x00},
      {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00},
      {0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00},
      {0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
      {0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
  };
  // A padding run is at most a few bytes; bounded all the same.
  for (int run = 0; run < 16; ++run) {
    bool skipped = false;
    for (const auto& nop : kNops) {
      if (bytesAt(code, at, nop)) {
        at += nop.size();
        skipped = true;
        break;
      }
    }
    if (!skipped) break;
  }
  return at;
}

// The RET offsets of `add $N,%rsp` epilogues, with the rbp restore each Go
// release puts around it (and padding NOPs before the RET).
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
      if (!bytesAt(code, ret, {0x5d})) continue;
      ret = afterNops(code, ret + 1);
      if (bytesAt(code, ret, {0xc3})) returns.push_back(ret);
      continue;
    }
    ret = afterNops(code, ret);
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

const format::Symbol* findSymbol(const format::ObjectSymbols& object, std::string_view name) {
  const format::Symbol* found = nullptr;
  for (const format::Symbol& symbol : object.symbols) {
    if (symbol.name == name && symbol.address != 0) found = &symbol;
  }
  return found;
}

Result<GoFunctionProbe> goFunctionProbe(const std::string& binary,
                                        const format::ObjectSymbols& object,
                                        const format::Symbol& function, std::string_view what) {
  const std::string named = std::string(what) + ": '" + function.name + "' in " + binary;
  if (function.size == 0 || function.size > kMaxFunctionBytes)
    return Error(named + " has an implausible size");
  Result<uint64_t> entry = functionFileOffset(object, function.name, what);
  if (!entry) return entry.error();

  std::vector<uint8_t> code(function.size);
  UniqueFd fd(open(binary.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error(std::string(what) + ": " + binary + ": " + std::strerror(errno));
  ssize_t got = pread(fd.get(), code.data(), code.size(), static_cast<off_t>(*entry));
  if (got != static_cast<ssize_t>(code.size()))
    return Error("read " + named + ": " + (got < 0 ? std::strerror(errno) : "short read"));
  Result<std::vector<uint64_t>> returns = goFunctionReturns(code);
  if (!returns) return Error(named + ": " + returns.error().message());
  GoFunctionProbe probe{.entry = *entry};
  for (uint64_t ret : *returns) probe.returns.push_back(*entry + ret);
  return probe;
}

Result<std::optional<GoMutexProbes>> findGoMutexProbes(const std::string& binary,
                                                       const format::ObjectSymbols& object) {
  const format::Symbol* lock_slow = findSymbol(object, kGoLockSlow);
  if (!lock_slow) return std::optional<GoMutexProbes>();
  Result<GoFunctionProbe> lock = goFunctionProbe(binary, object, *lock_slow, kWhat);
  if (!lock) return lock.error();
  const format::Symbol* unlock_slow = findSymbol(object, kGoUnlockSlow);
  if (!unlock_slow) return Error(std::string(kWhat) + ": no '" + kGoUnlockSlow + "' in " + binary);
  Result<GoFunctionProbe> unlock = goFunctionProbe(binary, object, *unlock_slow, kWhat);
  if (!unlock) return unlock.error();
  return std::optional<GoMutexProbes>(
      GoMutexProbes{.binary = binary,
                    .lock_slow = lock->entry,
                    .lock_slow_returns = std::move(lock->returns),
                    .unlock_slow = unlock->entry,
                    .unlock_slow_returns = std::move(unlock->returns)});
}

Result<std::optional<GoMutexProbes>> findGoMutexProbes(const std::string& binary) {
  Result<format::ObjectSymbols> object = objfile::readElfObject(binary);
  if (!object) return object.error().context(std::string(kWhat));
  return findGoMutexProbes(binary, *object);
}

}  // namespace incise::recorder
