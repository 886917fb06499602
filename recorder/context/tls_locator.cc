// A running process's thread-local variable, located: see tls_locator.h.
#include "recorder/context/tls_locator.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "base/file_identity.h"
#include "base/hex.h"
#include "base/unique_fd.h"
#include "objfile/elf_reader.h"
#include "objfile/tls_variable.h"
#include "recorder/probes/libc_locator.h"

namespace incise::recorder {
namespace {

constexpr size_t kMaxProgramHeaders = 256;
constexpr size_t kMaxDynamicEntries = 4096;
constexpr size_t kMaxLinkMaps = 4096;
constexpr size_t kMaxNameBytes = 4096;
// glibc's l_tls_offset values that are no static block (x86-64: TLS_TCB_AT_TP).
constexpr uint64_t kNoTlsOffset = 0;
constexpr uint64_t kForcedDynamicTlsOffset = ~uint64_t{0};

// The traced process's memory, read through /proc/PID/mem.
class ProcessMemory {
 public:
  static Result<ProcessMemory> open(uint32_t pid, const std::string& proc_root) {
    const std::string path = proc_root + "/" + std::to_string(pid) + "/mem";
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return Error::fromErrno(errno, "cannot open " + path);
    return ProcessMemory(pid, std::move(fd));
  }

  Status read(uint64_t address, void* out, size_t bytes) const {
    ssize_t got = pread(fd_.get(), out, bytes, static_cast<off_t>(address));
    if (got != static_cast<ssize_t>(bytes))
      return Error("pid " + std::to_string(pid_) + ": cannot read " + std::to_string(bytes) +
                   " bytes at " + hexAddress(address));
    return Status::ok();
  }
  Result<uint64_t> word(uint64_t address) const {
    uint64_t value = 0;
    INCISE_RETURN_IF_ERROR(read(address, &value, sizeof value));
    return value;
  }
  Result<std::string> string(uint64_t address) const {
    std::string out;
    char chunk[256];
    while (out.size() < kMaxNameBytes) {
      const ssize_t got = pread(fd_.get(), chunk, sizeof chunk, static_cast<off_t>(address));
      if (got <= 0) break;  // the end of a mapping: what was read so far
      const auto* end =
          static_cast<const char*>(std::memchr(chunk, '\0', static_cast<size_t>(got)));
      out.append(chunk, end ? static_cast<size_t>(end - chunk) : static_cast<size_t>(got));
      if (end) return out;
      address += static_cast<uint64_t>(got);
    }
    return Error("pid " + std::to_string(pid_) + ": no name at " + hexAddress(address));
  }

 private:
  ProcessMemory(uint32_t pid, UniqueFd fd) : pid_(pid), fd_(std::move(fd)) {}
  uint32_t pid_;
  UniqueFd fd_;
};

// The executable's program headers in memory, from its auxiliary vector.
struct LoadedExecutable {
  uint64_t bias = 0;
  std::vector<Elf64_Phdr> headers;
};

Result<LoadedExecutable> loadedExecutable(uint32_t pid, const std::string& dir,
                                          const ProcessMemory& memory) {
  UniqueFd auxv(::open((dir + "/auxv").c_str(), O_RDONLY | O_CLOEXEC));
  if (!auxv) return Error::fromErrno(errno, "cannot open " + dir + "/auxv");
  uint64_t entries[2 * 64] = {};
  const ssize_t got = ::read(auxv.get(), entries, sizeof entries);
  uint64_t phdr = 0, phnum = 0;
  for (ssize_t i = 0; i + 1 < got / 8; i += 2) {
    if (entries[i] == AT_PHDR) phdr = entries[i + 1];
    if (entries[i] == AT_PHNUM) phnum = entries[i + 1];
  }
  if (phdr == 0 || phnum == 0 || phnum > kMaxProgramHeaders)
    return Error("pid " + std::to_string(pid) + ": no program headers in its auxiliary vector");
  LoadedExecutable loaded;
  loaded.headers.resize(phnum);
  INCISE_RETURN_IF_ERROR(memory.read(phdr, loaded.headers.data(), phnum * sizeof(Elf64_Phdr)));
  for (const Elf64_Phdr& header : loaded.headers) {
    if (header.p_type == PT_PHDR) loaded.bias = phdr - header.p_vaddr;
  }
  return loaded;
}

// Where glibc keeps the fields a TLS lookup reads, as libc tells debuggers
// ({bits, count, offset} descriptors): link_map's l_tls_offset and
// l_tls_modid, and struct pthread's DTV pointer.
struct ThreadDbFields {
  uint64_t link_map_tls_offset = 0;
  uint64_t link_map_tls_modid = 0;
  uint64_t pthread_dtv = 0;
};

// One 64-bit field's offset from its descriptor `name` in `object`.
Result<uint64_t> threadDbField(const std::string& libc, const format::ObjectSymbols& object,
                               const std::string& name) {
  const format::Symbol* descriptor = nullptr;
  for (const format::Symbol& symbol : object.symbols) {
    if (symbol.name == name && symbol.size == 12) descriptor = &symbol;
  }
  if (descriptor == nullptr)
    return Error(libc + " does not say where glibc keeps a TLS field (no " + name +
                 ": not glibc?)");
  for (const format::Segment& segment : object.segments) {
    if (descriptor->address < segment.vaddr ||
        descriptor->address + 12 > segment.vaddr + segment.file_size)
      continue;
    UniqueFd fd(::open(libc.c_str(), O_RDONLY | O_CLOEXEC));
    uint32_t fields[3] = {};
    if (!fd || pread(fd.get(), fields, sizeof fields,
                     static_cast<off_t>(descriptor->address - segment.vaddr +
                                        segment.file_offset)) != sizeof fields)
      return Error("cannot read " + name + " in " + libc);
    if (fields[0] != 64 || fields[1] != 1 || fields[2] > 4096)
      return Error(libc + ": unexpected " + name + " descriptor {" + std::to_string(fields[0]) +
                   ", " + std::to_string(fields[1]) + ", " + std::to_string(fields[2]) + "}");
    return uint64_t{fields[2]};
  }
  return Error(libc + ": " + name + " is in no segment of the file");
}

Result<ThreadDbFields> threadDbFields(const std::string& libc) {
  INCISE_ASSIGN_OR_RETURN(format::ObjectSymbols object, objfile::readElfObject(libc));
  ThreadDbFields fields;
  INCISE_ASSIGN_OR_RETURN(fields.link_map_tls_offset,
                          threadDbField(libc, object, "_thread_db_link_map_l_tls_offset"));
  INCISE_ASSIGN_OR_RETURN(fields.link_map_tls_modid,
                          threadDbField(libc, object, "_thread_db_link_map_l_tls_modid"));
  INCISE_ASSIGN_OR_RETURN(fields.pthread_dtv,
                          threadDbField(libc, object, "_thread_db_pthread_dtvp"));
  return fields;
}

// threadDbFields, read once per C library file: every process a recording
// locates variables in asks, and most share one libc.
Result<ThreadDbFields> cachedThreadDbFields(const std::string& libc) {
  static std::mutex mutex;
  static std::map<FileIdentity, Result<ThreadDbFields>> fields;
  std::optional<FileIdentity> identity = fileIdentity(libc);
  if (!identity) return threadDbFields(libc);
  std::lock_guard<std::mutex> lock(mutex);
  auto found = fields.find(*identity);
  if (found == fields.end()) found = fields.emplace(*identity, threadDbFields(libc)).first;
  return found->second;
}

// Where the loader put one object's TLS block: at a static offset below the
// thread pointer, or (module != 0) in each thread's DTV.
struct TlsBlock {
  uint64_t static_offset = 0;
  uint32_t module = 0;
  uint32_t dtv_offset = 0;
};

// The TLS block of the object `wanted`, walking the process's link_map list.
Result<TlsBlock> tlsBlockOf(uint32_t pid, const std::string& proc_root, const std::string& dir,
                            const ProcessMemory& memory, const LoadedExecutable& exe,
                            const FileIdentity& wanted, bool wanted_is_executable) {
  const std::string who = "pid " + std::to_string(pid);
  std::optional<uint64_t> dynamic;
  for (const Elf64_Phdr& header : exe.headers) {
    if (header.p_type == PT_DYNAMIC) dynamic = exe.bias + header.p_vaddr;
  }
  if (!dynamic) return Error(who + ": its executable has no dynamic section");
  uint64_t r_debug = 0;
  for (size_t i = 0; i < kMaxDynamicEntries; ++i) {
    Elf64_Dyn entry{};
    INCISE_RETURN_IF_ERROR(memory.read(*dynamic + i * sizeof entry, &entry, sizeof entry));
    if (entry.d_tag == DT_NULL) break;
    if (entry.d_tag == DT_DEBUG) r_debug = entry.d_un.d_ptr;
  }
  if (r_debug == 0) return Error(who + ": the dynamic loader has not published its objects yet");
  INCISE_ASSIGN_OR_RETURN(std::string libc, libcOfProcess(pid, proc_root));
  INCISE_ASSIGN_OR_RETURN(ThreadDbFields fields, cachedThreadDbFields(libc));
  INCISE_ASSIGN_OR_RETURN(uint64_t link_map,
                          memory.word(r_debug + offsetof(struct r_debug, r_map)));
  for (size_t i = 0; i < kMaxLinkMaps && link_map != 0; ++i) {
    INCISE_ASSIGN_OR_RETURN(uint64_t name_at,
                            memory.word(link_map + offsetof(struct link_map, l_name)));
    // The first entry is the executable (an empty name).
    bool match = i == 0 && wanted_is_executable;
    if (!match && i > 0 && name_at != 0) {
      INCISE_ASSIGN_OR_RETURN(std::string name, memory.string(name_at));
      if (!name.empty() && name[0] == '/') match = fileIdentity(dir + "/root" + name) == wanted;
    }
    if (match) {
      INCISE_ASSIGN_OR_RETURN(uint64_t offset, memory.word(link_map + fields.link_map_tls_offset));
      if (offset != kForcedDynamicTlsOffset && offset != kNoTlsOffset)
        return TlsBlock{.static_offset = offset};
      // glibc leaves a dlopen'd object's block out of static TLS (no
      // offset, or forced dynamic): each thread has its own, in its DTV.
      INCISE_ASSIGN_OR_RETURN(uint64_t module, memory.word(link_map + fields.link_map_tls_modid));
      if (module == 0 || module > kMaxTlsModule)
        return Error(who + ": the object's TLS module id is " + std::to_string(module) +
                     " (its loader has not given it one yet?)");
      return TlsBlock{.module = static_cast<uint32_t>(module),
                      .dtv_offset = static_cast<uint32_t>(fields.pthread_dtv)};
    }
    INCISE_ASSIGN_OR_RETURN(link_map, memory.word(link_map + offsetof(struct link_map, l_next)));
  }
  return Error(who + ": the object is not among the ones its dynamic loader loaded");
}

}  // namespace

Result<TlsLocation> locateTlsVariable(uint32_t pid, const std::string& object_path,
                                      std::string_view variable, const std::string& proc_root) {
  const std::string dir = proc_root + "/" + std::to_string(pid);
  const std::string object_file = dir + "/root" + object_path;
  INCISE_ASSIGN_OR_RETURN(objfile::TlsVariable tls,
                          objfile::findTlsVariable(object_file, variable));
  std::optional<FileIdentity> wanted = fileIdentity(object_file);
  if (!wanted) return Error::fromErrno(errno, "cannot stat " + object_file);
  const bool is_executable = fileIdentity(dir + "/exe") == wanted;
  INCISE_ASSIGN_OR_RETURN(ProcessMemory memory, ProcessMemory::open(pid, proc_root));
  INCISE_ASSIGN_OR_RETURN(LoadedExecutable exe, loadedExecutable(pid, dir, memory));
  bool has_dynamic = false;
  for (const Elf64_Phdr& header : exe.headers) has_dynamic |= header.p_type == PT_DYNAMIC;
  // A static executable has no loader: its one block is laid out as the ELF says.
  if (is_executable && !has_dynamic)
    return TlsLocation{.offset = static_cast<int64_t>(tls.offset) -
                                 static_cast<int64_t>(tls.executableBlockOffset())};
  Result<TlsBlock> block = tlsBlockOf(pid, proc_root, dir, memory, exe, *wanted, is_executable);
  if (!block) return block.error().context("'" + std::string(variable) + "' in " + object_path);
  if (block->module != 0)
    return TlsLocation{.offset = static_cast<int64_t>(tls.offset),
                       .module = block->module,
                       .dtv_offset = block->dtv_offset};
  return TlsLocation{.offset = static_cast<int64_t>(tls.offset) -
                               static_cast<int64_t>(block->static_offset)};
}

}  // namespace incise::recorder
