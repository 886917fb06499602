// StackNamer: a stack id in a process turned into printable frame names,
// root first, grouped by function, module or source line.
//
// Every distinct (pid, stack id) is symbolized once and cached, so a report
// over millions of samples costs one symbolization per distinct stack.
// Return addresses (every frame but the leaf) are looked up at address - 1,
// so a call that is the last instruction of a function is charged to that
// function, not to the next one. The symbolizer has no line information yet:
// --by line groups by function and lineFallback() says so.
//
//   StackNamer namer(trace, FrameGrouping::kFunction);
//   const std::vector<std::string>& frames = namer.rootFirst(pid, stack_id, time);
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/status.h"

namespace incise::analyzer {

class Trace;

enum class FrameGrouping { kFunction, kModule, kLine };

// "function" | "module" | "line"; an error naming the choices otherwise.
Result<FrameGrouping> parseFrameGrouping(const std::string& text);

class StackNamer {
 public:
  StackNamer(Trace& trace, FrameGrouping grouping);

  // Empty for stack id 0 or an id the file does not have. `time` picks the
  // mappings and JIT maps valid then (use the first time the stack was seen).
  const std::vector<std::string>& rootFirst(uint32_t pid, uint64_t stack_id, uint64_t time);
  // The same names, not cached: for callers that name each stack once
  // (StackWeights::named), where a cached copy would only cost memory and time.
  std::vector<std::string> rootFirstOnce(uint32_t pid, uint64_t stack_id, uint64_t time);
  bool lineFallback() const { return grouping_ == FrameGrouping::kLine; }
  size_t distinctStacks() const { return cache_.size(); }

 private:
  struct Key {
    uint32_t pid;
    uint64_t stack_id;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.stack_id * 1000003u ^ k.pid);
    }
  };

  Trace& trace_;
  FrameGrouping grouping_;
  std::unordered_map<Key, std::vector<std::string>, KeyHash> cache_;
};

}  // namespace incise::analyzer
