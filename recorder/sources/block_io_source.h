// Block I/O (--block-io): per-request latency from bpf/block_io.bpf.c,
// block_rq_issue to block_rq_complete, with device, operation and bytes,
// charged to the submitting thread and its user stack (taken at
// block_io_start where the kernel has it, else at issue), as format::Latency
// rows (histograms with --aggregate). Devices are named from
// /sys/dev/block/MAJ:MIN the first time a row carries them.
//
//   if (config.block_io) sources.push_back(makeBlockIoSource());
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "recorder/sources/source.h"

namespace incise::recorder {

std::unique_ptr<Source> makeBlockIoSource();

// "loop0" for the kernel dev_t (major << 20 | minor) of /dev/loop0, read
// under `sys_root` ("/sys"); "MAJ:MIN" when sysfs does not name it.
std::string blockDeviceName(uint64_t kernel_dev, const std::string& sys_root = "/sys");

}  // namespace incise::recorder
