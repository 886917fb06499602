#include "recorder/kernel_btf.h"

#include <bpf/btf.h>

namespace incise::recorder {

const btf* kernelBtf() {
  // A function-local static: initialised once, thread-safe, never freed (the
  // sources that ask live until the recorder exits).
  static const btf* const kernel = btf__load_vmlinux_btf();
  return kernel;
}

}  // namespace incise::recorder
