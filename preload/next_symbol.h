// The C library's own definition of a function this library interposes,
// found with dlsym(RTLD_NEXT) at its first use (the constructor resolves the
// lock functions early; a call that comes before it, from another library's
// constructor, resolves its own). A function the C library lacks ends the
// process with a message: there is nothing to forward the call to.
//
//   static NextSymbol<int (*)(pthread_mutex_t*)> next{"pthread_mutex_lock"};
//   return next.get()(mutex);
#pragma once

#include <atomic>

namespace incise::preload {

[[noreturn]] void failMissingSymbol(const char* name);
void* findNextSymbol(const char* name);

template <typename Function>
class NextSymbol {
 public:
  explicit constexpr NextSymbol(const char* name) : name_(name) {}
  Function get() {
    Function function = function_.load(std::memory_order_acquire);
    if (function) return function;
    void* found = findNextSymbol(name_);
    if (!found) failMissingSymbol(name_);
    function = reinterpret_cast<Function>(found);
    function_.store(function, std::memory_order_release);
    return function;
  }

 private:
  const char* name_;
  std::atomic<Function> function_{nullptr};
};

}  // namespace incise::preload
