// librequest_context.so: a library that holds a request id in a
// thread_local, for request_story --context-library to dlopen, so the id
// lives in dynamic TLS (each thread's block reached through its DTV) rather
// than in the executable's static block. C linkage: the symbol is the plain
// name.
#include <cstdint>

extern "C" {

thread_local std::uint64_t library_request_id = 0;

// The calling thread's library_request_id (allocating its block on first use).
std::uint64_t* library_request_id_address() {
  return &library_request_id;
}

}  // extern "C"
