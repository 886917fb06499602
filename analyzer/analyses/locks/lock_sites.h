// Lock acquire sites: an acquire stack named by the program's own code.
//
// A lock's acquire stack starts in the kernel (futex wait) and in the C
// library (pthread_mutex_lock, __lll_lock_wait); the interesting frame is
// the first user frame outside the C library and the dynamic loader (and
// outside Go's sync.Mutex / RWMutex methods): that function is the site
// ("update_account", "main.(*stack).handlePacket"). When a stack has none (Debian's
// libc has no frame pointers, so walks often stop inside it), the first
// user frame, then the leaf, names it.
//
// LockSites interns site names: stacks with different ids but the same
// site frame get one site id, so `--by site` merges them. Site 0 is
// "[unknown site]" (stack id 0).
//
//   LockSites sites(trace.symbolizer(), trace.stacks());
//   sites.add(pid, stack_id, time);              // symbolizes each acquire stack once
//   uint64_t id = sites.siteOf(stack_id);
//   std::cout << sites.name(id);                 // "update_account"
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/symbolize/frame.h"
#include "format/reader.h"

namespace incise::analyzer {

class Symbolizer;

// Module names of the C library and the loader, where lock calls live, and
// of the recorder's preload library, whose wrappers a contended call's stack crosses.
bool isRuntimeLibrary(const std::string& module);

// Index of the frame that names the site, in `leaf_first`; frames.size() when empty.
size_t siteFrameIndex(std::span<const Frame> leaf_first);

// A stack in a few words, leaf first: "memset <- update_account <- worker_main".
// Kernel frames are left out when the stack has user frames.
std::string describeStack(Symbolizer& symbolizer, const format::StackTable& stacks, uint64_t pid,
                          uint64_t stack_id, uint64_t time, size_t max_frames = 3);

class LockSites {
 public:
  LockSites(Symbolizer& symbolizer, const format::StackTable& stacks);

  // Symbolizes `stack_id` in `pid` at `time`, the first time it is seen.
  void add(uint64_t pid, uint64_t stack_id, uint64_t time);
  // 0 for a stack not added or without frames.
  uint64_t siteOf(uint64_t stack_id) const;
  const std::string& name(uint64_t site) const;
  // "update_account <- worker_main": the site and the caller above it.
  const std::string& context(uint64_t site) const;

 private:
  Symbolizer& symbolizer_;
  const format::StackTable& stacks_;
  std::unordered_map<uint64_t, uint64_t> site_of_stack_;
  std::unordered_map<std::string, uint64_t> site_by_name_;
  std::vector<std::string> names_ = {"[unknown site]"};
  std::vector<std::string> contexts_ = {"[unknown site]"};
};

}  // namespace incise::analyzer
