// Where a process's C library is, so the lock source can put uprobes in it.
//
// The path comes from the process's own /proc/PID/maps and is opened through
// /proc/PID/root, so a process in a container (another mount namespace) is
// probed in the libc it actually runs.
//
//   Result<std::string> libc = libcOfProcess(pid);   // "/proc/42/root/usr/lib/.../libc.so.6"
//   if (!libc) warn(libc.error().message());          // "pid 42: no libc mapped (static binary?)"
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace incise::recorder {

// The path of the first executable file mapping in /proc/PID/maps text
// whose path `matches`.
std::optional<std::string> findExecutableInMaps(
    std::string_view maps_text, const std::function<bool(std::string_view path)>& matches);

// /proc/PID/maps of `pid` under `proc_root`, whole; an Error naming it when
// it cannot be read.
Result<std::string> readProcessMaps(uint32_t pid, const std::string& proc_root = "/proc");

// The path of the first executable mapping of libc ("libc.so.6",
// "libc-2.31.so", "libc.musl-x86_64.so.1") in /proc/PID/maps text; an Error
// when there is none.
Result<std::string> findLibcInMaps(std::string_view maps_text);

// findLibcInMaps on /proc/PID/maps, prefixed with /proc/PID/root.
// `proc_root` is "/proc" except in tests.
Result<std::string> libcOfProcess(uint32_t pid, const std::string& proc_root = "/proc");

}  // namespace incise::recorder
