// The running kernel's BTF (/sys/kernel/btf/vmlinux), parsed once for the
// recorder's own questions about the kernel (which tracepoints it has, the
// names of its enums), however many sources ask and from whichever loading
// thread. Parsing it takes 5-10 ms of CPU; libbpf's relocations of each BPF
// object are separate.
//
//   if (const btf* kernel = kernelBtf())
//     bool has = btf__find_by_name_kind(kernel, "btf_trace_block_io_start", BTF_KIND_TYPEDEF) > 0;
#pragma once

struct btf;

namespace incise::recorder {

// Null when the kernel has no BTF; kept until the process exits.
const btf* kernelBtf();

}  // namespace incise::recorder
