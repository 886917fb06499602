// Whether this binary was built with a sanitizer that brings its own
// allocator (ASan, MSan, TSan): process-level shortcuts that bypass or tune
// malloc (heap_setup.h, exit_without_teardown.h) stand aside there, so leak
// checks and the sanitizer's allocator see the program as written.
//
//   if constexpr (incise::analyzer::kSanitizerBuild) return;
#pragma once

namespace incise::analyzer {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
#else
inline constexpr bool kSanitizerBuild = false;
#endif

}  // namespace incise::analyzer
