// Where a process keeps each --context variable, for bpf/context.bpf.h's
// `context_processes`: per slot, the offset from its threads' thread
// pointer and the value's size.
//
// The object that defines a variable is the process's executable, or for
// NAME=BIN:SYMBOL the mapped object whose path is BIN or ends in BIN's file
// name. Where it lies comes from locateTlsVariable (tls_locator.h): static
// TLS, or a library opened with dlopen reached through each thread's DTV.
// Right after an exec the dynamic loader may not have published its objects
// yet: the executable's block is then placed as the ELF lays it out (module
// 1 comes first), and a library's variable is asked for again later.
//
//   ContextLocations found = locateContexts(pid, config.contexts);
//   if (found.any()) bpf_map_update_elem(fd, &pid, &found.where, BPF_ANY);
//   for (const std::string& note : found.missing) sink.addNote(note);   // when final
//   if (found.retry) ask again at the next poll;
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "bpf/context.h"
#include "recorder/record_config.h"

namespace incise::recorder {

struct ContextLocations {
  context_process where{};           // size 0: that slot is not read in this process
  std::vector<std::string> missing;  // per slot not found: why, naming the symbol
  bool retry = false;                // a slot may be found later (loader, library not yet)
  bool any() const;
};

ContextLocations locateContexts(uint32_t pid, const std::vector<ContextSpec>& specs,
                                const std::string& proc_root = "/proc");

// Before a process has exec'd `executable` (`-- CMD`): the variables of the
// executable placed as its ELF lays them out, for that file only; the
// others wait for locateContexts after the exec.
ContextLocations locateInExecutable(const std::string& executable,
                                    const std::vector<ContextSpec>& specs);

// Whether `spec` names (NAME=BIN:SYMBOL) the object mapped from `path`: its
// path is BIN, or its file name is BIN's.
bool namesMappedObject(const ContextSpec& spec, const std::string& path);

// Checks `spec`'s variable in the ELF file `path`: an Error names the symbol
// and the file when it is missing, not thread-local, or not 1, 2, 4 or 8
// bytes. Returns its size.
Result<uint8_t> contextVariableSize(const std::string& path, const ContextSpec& spec);

}  // namespace incise::recorder
