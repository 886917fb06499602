#include "recorder/probes/function_probe_spec.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "base/unique_fd.h"
#include "objfile/elf_reader.h"
#include "recorder/probes/function_code.h"
#include "recorder/probes/lock_probe_spec.h"

namespace incise::recorder {
namespace {

// Larger functions than this are not read whole to find their returns.
constexpr uint64_t kMaxFunctionBytes = 1u << 20;

std::string optionText(const FunctionProbeSpec& spec) {
  return "--trace " + spec.text;
}

bool parseOffset(std::string_view text, uint64_t* value) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value, base);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

Result<std::vector<uint8_t>> readFunctionBytes(const std::string& path, uint64_t offset,
                                               uint64_t size) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::fromErrno(errno, path);
  std::vector<uint8_t> bytes(size);
  ssize_t got = pread(fd.get(), bytes.data(), size, static_cast<off_t>(offset));
  int error = errno;
  if (got != static_cast<ssize_t>(size))
    return Error(path + ": cannot read the function's code" +
                 (got < 0 ? std::string(": ") + std::strerror(error) : std::string()));
  return bytes;
}

const format::Symbol* findSymbol(const format::ObjectSymbols& object, const std::string& name) {
  for (const format::Symbol& symbol : object.symbols)
    if (symbol.name == name && symbol.address != 0) return &symbol;
  return nullptr;
}

}  // namespace

Result<FunctionProbeSpec> parseFunctionProbe(const std::string& text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    return Error("--trace " + text + ": expected BIN:FUNC, BIN:FUNC+OFFSET or kernel:FUNC");
  FunctionProbeSpec spec{.text = text, .binary = text.substr(0, colon)};
  std::string function = text.substr(colon + 1);
  size_t plus = function.rfind('+');
  if (plus != std::string::npos && plus != 0) {
    if (!parseOffset(std::string_view(function).substr(plus + 1), &spec.offset))
      return Error("--trace " + text + ": '" + function.substr(plus + 1) +
                   "' is not an offset (decimal or 0x hex)");
    function.resize(plus);
  }
  spec.symbol = function;
  if (spec.kernel() && spec.offset != 0)
    return Error("--trace " + text + ": kernel functions are timed from their entry (no +OFFSET)");
  return spec;
}

Result<ResolvedFunctionProbe> resolveFunctionProbe(const FunctionProbeSpec& spec, uint32_t id) {
  ResolvedFunctionProbe probe{.spec = spec, .id = id};
  if (spec.kernel()) return probe;
  struct stat info {};
  if (stat(spec.binary.c_str(), &info) != 0)
    return Error(optionText(spec) + ": " + spec.binary + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return Error(optionText(spec) + ": " + spec.binary + " is not a regular file");
  Result<format::ObjectSymbols> object = objfile::readElfObject(spec.binary);
  if (!object) return object.error().context(optionText(spec));
  const format::Symbol* symbol = findSymbol(*object, spec.symbol);
  if (!symbol)
    return Error(optionText(spec) + ": no symbol '" + spec.symbol + "' in " + spec.binary);
  Result<uint64_t> start = functionFileOffset(*object, spec.symbol, optionText(spec));
  if (!start) return start.error();
  probe.go = findSymbol(*object, "runtime.buildVersion") != nullptr;
  probe.function_offset = *start;
  probe.start_offset = *start + spec.offset;
  probe.use_uretprobe = !probe.go && spec.offset == 0;
  if (probe.use_uretprobe) return probe;

  // Go, or a probe inside the function: the returns and the stack depth come
  // from the code.
  if (symbol->size == 0 || symbol->size > kMaxFunctionBytes)
    return Error(optionText(spec) + ": '" + spec.symbol + "' has no usable size in " + spec.binary +
                 " (needed to find its RET instructions)");
  Result<std::vector<uint8_t>> bytes = readFunctionBytes(spec.binary, *start, symbol->size);
  if (!bytes) return bytes.error().context(optionText(spec));
  Result<FunctionCode> code = analyzeFunctionCode(*bytes, symbol->address, spec.offset);
  if (!code) return code.error().context(optionText(spec));
  if (code->returns.empty())
    return Error(optionText(spec) + ": '" + spec.symbol +
                 "' has no RET instruction (it only jumps or never returns)");
  probe.sp_delta = code->sp_delta;
  for (uint64_t offset : code->returns) probe.return_offsets.push_back(*start + offset);
  return probe;
}

}  // namespace incise::recorder
