#include "analyzer/analyses/locks/lock_sites.h"

#include <algorithm>

#include "analyzer/symbolize/stack_frames.h"
#include "analyzer/symbolize/symbolizer.h"

namespace incise::analyzer {

bool isRuntimeLibrary(const std::string& module) {
  for (const char* prefix : {"libc.so", "libc-", "libpthread", "ld-linux", "ld-musl", "libc.musl",
                             // incise-record's lock-call wrappers (--locks all on a command)
                             "libincise-preload.so"}) {
    if (module.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

namespace {

// Go's sync.Mutex, RWMutex and Cond methods, and the runtime functions they
// park in (go:linkname'd into package sync), are the lock's or condition's
// own code, as pthread_mutex_lock is in C: the site is their caller.
bool isGoLockMethod(const std::string& name) {
  for (const char* prefix :
       {"sync.(*Mutex).", "sync.(*RWMutex).", "sync.(*Cond).", "sync.runtime_"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

size_t siteFrameIndex(std::span<const Frame> leaf_first) {
  size_t first_user = leaf_first.size();
  for (size_t i = 0; i < leaf_first.size(); ++i) {
    // The cut marker ends a broken stack: it is no call site.
    if (leaf_first[i].kernel || leaf_first[i].name == kStackCutName) continue;
    if (first_user == leaf_first.size()) first_user = i;
    if (!isRuntimeLibrary(leaf_first[i].module) && !isGoLockMethod(leaf_first[i].name)) return i;
  }
  return first_user != leaf_first.size() ? first_user : 0;
}

namespace {

std::vector<Frame> framesOf(Symbolizer& symbolizer, const format::StackTable& stacks, uint64_t pid,
                            uint64_t stack_id, uint64_t time) {
  std::vector<StackFrame> found;
  stackFrames(symbolizer, static_cast<uint32_t>(pid), stacks.frames(stack_id), time, found);
  std::vector<Frame> frames;
  frames.reserve(found.size());
  for (const StackFrame& frame : found) frames.push_back(*frame.frame);
  return frames;
}

}  // namespace

std::string describeStack(Symbolizer& symbolizer, const format::StackTable& stacks, uint64_t pid,
                          uint64_t stack_id, uint64_t time, size_t max_frames) {
  std::vector<Frame> frames = framesOf(symbolizer, stacks, pid, stack_id, time);
  bool has_user =
      std::any_of(frames.begin(), frames.end(), [](const Frame& f) { return !f.kernel; });
  std::string text;
  size_t shown = 0;
  for (const Frame& f : frames) {
    if ((has_user && f.kernel) || shown == max_frames) continue;
    text += (shown++ == 0 ? "" : " <- ") + f.name;
  }
  return text.empty() ? "[no stack]" : text;
}

LockSites::LockSites(Symbolizer& symbolizer, const format::StackTable& stacks)
    : symbolizer_(symbolizer), stacks_(stacks) {}

void LockSites::add(uint64_t pid, uint64_t stack_id, uint64_t time) {
  if (stack_id == 0 || site_of_stack_.count(stack_id)) return;
  std::vector<Frame> frames = framesOf(symbolizer_, stacks_, pid, stack_id, time);
  if (frames.empty()) {
    site_of_stack_[stack_id] = 0;
    return;
  }
  size_t index = siteFrameIndex(frames);
  const std::string& name = frames[index].name;
  auto [it, fresh] = site_by_name_.try_emplace(name, names_.size());
  if (fresh) {
    names_.push_back(name);
    contexts_.push_back(index + 1 < frames.size() ? name + " <- " + frames[index + 1].name : name);
  }
  site_of_stack_[stack_id] = it->second;
}

uint64_t LockSites::siteOf(uint64_t stack_id) const {
  auto it = site_of_stack_.find(stack_id);
  return it == site_of_stack_.end() ? 0 : it->second;
}

const std::string& LockSites::name(uint64_t site) const {
  return site < names_.size() ? names_[site] : names_[0];
}

const std::string& LockSites::context(uint64_t site) const {
  return site < contexts_.size() ? contexts_[site] : contexts_[0];
}

}  // namespace incise::analyzer
