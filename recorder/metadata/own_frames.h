// OwnFrames: the recorder's own frames at the leaf end of kernel stacks —
// its BPF programs and the tracing glue that ran them (bpf_trace_run4,
// __bpf_trace_sched_switch, __traceiter_*, trace_call_bpf, perf_syscall_*).
// A stack a tracepoint program takes starts inside the program itself, so
// without this nearly every off-CPU, wake-up and futex stack would begin
// with `bpf_trace_run4;bpf_prog_...`. They are cut before a stack is
// interned, so a stack starts at the kernel function that hit the
// tracepoint (__schedule for a switch, try_to_wake_up for a waker).
//
// Ranges: each loaded program's JIT image (bpf_prog_info: exact starts and
// lengths of the program and its subprograms) and the glue functions named
// in /proc/kallsyms (from a symbol's address to the next symbol's), read once
// while the sources load.
//
//   OwnFrames own = OwnFrames::read("/proc/kallsyms");          // at start
//   for (auto* object : loaded) own.addPrograms(object);        // after load
//   own.finish();
//   size_t skip = own.leading(kernel_frames);                   // per stack
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

struct bpf_object;

namespace incise::recorder {

class OwnFrames {
 public:
  OwnFrames() = default;
  // The glue functions in a kallsyms file (empty when it is unreadable or
  // hides addresses; then only the programs are cut).
  static OwnFrames read(const std::string& kallsyms_path);
  // A glue function by its name (as kallsyms lists it).
  static bool isTracingGlue(std::string_view name);

  void addPrograms(const bpf_object* object);
  void addProgramRange(uint64_t start, uint64_t end) { programs_.add(start, end); }
  void addGlueRange(uint64_t start, uint64_t end) { glue_.add(start, end); }
  // Call after the last add and before leading().
  void finish();

  // How many of the leading (leaf-most) frames of `kernel_frames` are the
  // recorder's own: none unless the leaf is in one of its programs (the
  // program took the stack, or a sample interrupted it), then every frame
  // up to the first that is neither program nor glue.
  size_t leading(std::span<const uint64_t> kernel_frames) const {
    if (kernel_frames.empty() || !programs_.contains(kernel_frames[0])) return 0;
    size_t n = 1;
    while (n < kernel_frames.size() &&
           (glue_.contains(kernel_frames[n]) || programs_.contains(kernel_frames[n])))
      ++n;
    return n;
  }
  size_t programRanges() const { return programs_.size(); }
  size_t glueRanges() const { return glue_.size(); }

 private:
  class Ranges {
   public:
    void add(uint64_t start, uint64_t end);
    void finish();
    bool contains(uint64_t address) const;
    size_t size() const { return ranges_.size(); }

   private:
    std::vector<std::pair<uint64_t, uint64_t>> ranges_;  // [start, end), sorted, disjoint
    uint64_t lowest_ = UINT64_MAX;
    uint64_t highest_ = 0;
  };
  Ranges programs_;
  Ranges glue_;
};

}  // namespace incise::recorder
