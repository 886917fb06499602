// Where a thread-local variable of a running process lies relative to its
// threads' thread pointer (the FS base on x86-64), so a BPF program can read
// it at an event with one user read: address = fs_base + offset.
//
// The object that defines the variable may be the executable or a library
// the process loaded at start (static TLS). Where the dynamic loader put
// that object's TLS block is read from the process itself: its link_map
// list (found through the executable's DT_DEBUG entry, r_debug) holds each
// object's l_tls_offset, at the field offset glibc publishes for debuggers
// in libc.so.6 (_thread_db_link_map_l_tls_offset). A library opened later
// with dlopen has a dynamic TLS block, reached only through each thread's
// vector of blocks: refused here, with a message saying so.
//
// Everything read from the process is bounded and checked: it is the
// traced program's memory.
//
//   Result<int64_t> offset = tlsOffsetFromThreadPointer(pid, "/usr/lib/libfoo.so", "request_id");
//   // value at *(fs_base + *offset)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace incise::recorder {

// `object_path` is the object as the process maps it (the executable's or a
// library's path in /proc/PID/maps); `proc_root` is "/proc" except in tests.
Result<int64_t> tlsOffsetFromThreadPointer(uint32_t pid, const std::string& object_path,
                                           std::string_view variable,
                                           const std::string& proc_root = "/proc");

}  // namespace incise::recorder
