// A thread-local variable of an ELF object, found by name: where it sits in
// the object's TLS block (PT_TLS) and how big it is, so the recorder can read
// its value at an event from the thread pointer.
//
// x86-64 uses TLS variant II: the blocks of the modules loaded at start lie
// below the thread pointer, the executable's first (module 1), so the
// executable's variable is at  thread_pointer - executableBlockOffset() +
// offset. (Modules loaded later have their own block, reached through the
// thread's dynamic thread vector.)
//
//   INCISE_ASSIGN_OR_RETURN(objfile::TlsVariable var,
//                           objfile::findTlsVariable("/usr/bin/server", "request_id"));
//   uint64_t address = thread_pointer - var.executableBlockOffset() + var.offset;
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace incise::objfile {

struct TlsVariable {
  uint64_t offset = 0;  // from the start of the object's TLS block (st_value)
  uint64_t size = 0;    // bytes (st_size)
  // The object's PT_TLS segment: the block's size, alignment and address
  // (its misalignment shifts where the block starts).
  uint64_t block_size = 0;
  uint64_t block_align = 1;
  uint64_t block_vaddr = 0;

  // How far below the thread pointer the block of module 1 (the executable)
  // starts, as the dynamic loader lays it out (glibc's l_tls_offset; musl
  // places it the same way).
  uint64_t executableBlockOffset() const;
};

// Largest TLS block alignment accepted: a page (larger is not a real file).
inline constexpr uint64_t kMaxTlsAlign = 4096;

// Looks `name` up in .symtab, else .dynsym. An Error names the symbol and the
// file: not found, not a thread-local variable, or a malformed TLS segment
// (no PT_TLS, an alignment that is not a power of two up to a page, a
// variable past the block's end).
Result<TlsVariable> findTlsVariable(const std::string& path, std::string_view name);

}  // namespace incise::objfile
