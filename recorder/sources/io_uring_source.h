// io_uring (--io-uring): per-request latency from bpf/io_uring.bpf.c,
// io_uring_submit_req to io_uring_complete, per opcode, charged to the
// submitting thread and its user stack (io-wq workers' time included), as
// format::Latency rows (histograms with --aggregate). Opcodes are named from
// the running kernel's BTF (enum io_uring_op).
//
//   if (config.io_uring) sources.push_back(makeIoUringSource());
#pragma once

#include <memory>

#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeIoUringSource();

}  // namespace incise::recorder
