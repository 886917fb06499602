// Where a thread-local variable of a running process lies relative to its
// threads' thread pointer (the FS base on x86-64), so a BPF program can read
// it at an event.
//
// The object that defines the variable may be the executable or a library
// the process loaded at start (static TLS: address = fs_base + offset, one
// user read). Where the dynamic loader put that object's TLS block is read
// from the process itself: its link_map list (found through the
// executable's DT_DEBUG entry, r_debug) holds each object's l_tls_offset,
// at the field offset glibc publishes for debuggers in libc.so.6
// (_thread_db_link_map_l_tls_offset).
//
// A library opened later with dlopen has no static block: each thread gets
// its own block when it first touches one of the library's variables, and
// finds it through its dynamic thread vector (DTV): the thread's
// dtv = *(fs_base + dtv_offset), the block at dtv[module].val (entries of
// 16 bytes; dtv[-1] holds how many there are), the variable at block +
// offset. The module id is the object's l_tls_modid in the same link_map
// entry, and dtv_offset is where struct pthread keeps the DTV pointer; both
// field offsets are again the ones glibc publishes
// (_thread_db_link_map_l_tls_modid, _thread_db_pthread_dtvp). The module id
// is known only once dlopen has loaded the object, so the recorder asks
// again when it sees the object mapped (context_source.cc).
//
// Everything read from the process is bounded and checked: it is the
// traced program's memory.
//
//   Result<TlsLocation> at = locateTlsVariable(pid, "/usr/lib/libfoo.so", "request_id");
//   // at->module == 0: value at *(fs_base + at->offset)
//   // else: *(dtv[at->module].val + at->offset), dtv = *(fs_base + at->dtv_offset)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace incise::recorder {

struct TlsLocation {
  int64_t offset = 0;       // static: from the thread pointer; dynamic: in the block
  uint32_t module = 0;      // 0: static TLS; else the object's module id (DTV index)
  uint32_t dtv_offset = 0;  // dynamic: the DTV pointer's offset from the thread pointer
};

// Largest module id accepted from a process (glibc numbers them from 1, one per
// object with TLS).
inline constexpr uint64_t kMaxTlsModule = 1u << 16;

// `object_path` is the object as the process maps it (the executable's or a
// library's path in /proc/PID/maps); `proc_root` is "/proc" except in tests.
Result<TlsLocation> locateTlsVariable(uint32_t pid, const std::string& object_path,
                                      std::string_view variable,
                                      const std::string& proc_root = "/proc");

}  // namespace incise::recorder
