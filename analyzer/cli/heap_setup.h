// Heap setup for the analyzer process: few, large page faults instead of
// many small ones.
//
// On the VMs we measure on, the first touch of a 4 KiB page costs 15-35 us
// (a fault that exits to the hypervisor; 16 MiB touched page by page took
// 70-150 ms, the same 16 MiB as transparent huge pages about 1 ms). A report
// on a 60 k-sample system-wide trace touched ~20 MB in ~5,000 faults, more
// time than its own work. So, before any command runs, the heap is set up
// the way glibc's glibc.malloc.hugetlb=1, arena_max=1 and a large
// mmap_threshold tunables would: one arena (the chunk-decoding threads
// allocate from the main heap too, rather than from their own mmap'd
// arenas), large buffers from the heap instead of a fresh mmap each
// (decoded columns are freed and allocated again chunk after chunk), freed
// memory kept, and the first 64 MiB of heap advised as huge pages. Nothing
// changes but speed and, by at most a few MiB of rounding, peak RSS.
// Sanitizer builds keep their own allocator and skip this.
//
//   int main(int argc, char** argv) {
//     incise::analyzer::setUpReportHeap();   // before any thread starts
//     ...
//   }
#pragma once

namespace incise::analyzer {

void setUpReportHeap();

}  // namespace incise::analyzer
