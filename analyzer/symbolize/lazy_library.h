// LazyLibrary: a shared library opened with dlopen on first use instead of
// linked, so commands that never need it do not pay for loading it.
//
// libdebuginfod and libcurl each drag in some thirty libraries (gnutls or
// openssl, krb5, ldap, ssh, ...). Linked, the dynamic loader maps and
// relocates all of them before main() on every `incise` run: about 25 ms of
// CPU, most of a short command's cost. Only debuginfod look-ups and the
// ClickHouse archive use them, so they are opened when those run.
//
// Function types come from the library's own header (decltype of the
// declaration: an unevaluated use that needs no link), so a signature cannot
// drift from the real one.
//
//   static LazyLibrary curl("libcurl.so.4");   // one per process
//   auto* init = curl.function<decltype(&curl_easy_init)>("curl_easy_init");
//   if (!init) return Error(curl.error());   // "cannot load libcurl.so.4: ..."
//   CURL* handle = init();
#pragma once

#include <dlfcn.h>

#include <string>

namespace incise::analyzer {

class LazyLibrary {
 public:
  explicit LazyLibrary(std::string soname) : soname_(std::move(soname)) {}
  // Never dlclose: libraries like libcurl leave atexit handlers and
  // thread-local destructors behind, so the handle lives as long as the process.
  ~LazyLibrary() = default;
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  // The named function, opening the library on the first call; null when the
  // library or the symbol is missing (error() says which).
  template <typename FunctionPointer>
  FunctionPointer function(const char* name) {
    if (!open()) return nullptr;
    void* symbol = dlsym(handle_, name);
    if (!symbol) {
      error_ = std::string(name) + " is missing from " + soname_;
      return nullptr;
    }
    return reinterpret_cast<FunctionPointer>(symbol);
  }

  bool open() {
    if (handle_) return true;
    if (tried_) return false;
    tried_ = true;
    handle_ = dlopen(soname_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* why = dlerror();
      error_ = "cannot load " + soname_ + ": " + (why ? why : "unknown dlopen error");
    }
    return handle_ != nullptr;
  }

  const std::string& error() const { return error_; }

 private:
  std::string soname_;
  void* handle_ = nullptr;
  bool tried_ = false;
  std::string error_;
};

}  // namespace incise::analyzer
