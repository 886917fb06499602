#include "preload/next_symbol.h"

#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

namespace incise::preload {

void* findNextSymbol(const char* name) {
  return dlsym(RTLD_NEXT, name);
}

void failMissingSymbol(const char* name) {
  const char prefix[] = "libincise-preload.so: the C library has no ";
  (void)!write(STDERR_FILENO, prefix, sizeof(prefix) - 1);
  (void)!write(STDERR_FILENO, name, strlen(name));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(127);
}

}  // namespace incise::preload
