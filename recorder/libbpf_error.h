// Errors from libbpf and the kernel as incise::Error values that name the
// failed step: libbpfError("cpu samples: load", -EPERM) ->
// "cpu samples: load: Operation not permitted".
#pragma once

#include <cstring>
#include <string>

#include "base/status.h"

namespace incise::recorder {

// `err` is a libbpf return value (negative errno) or a positive errno.
inline Error libbpfError(const std::string& step, long err) {
  int code = static_cast<int>(err < 0 ? -err : err);
  return Error(step + ": " + std::strerror(code));
}

}  // namespace incise::recorder
