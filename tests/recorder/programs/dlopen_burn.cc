// dlopen_burn PLUGIN CPU_MS CHILDREN: CHILDREN forked copies (no exec) and
// then the parent each dlopen PLUGIN, burn CPU_MS of CPU inside it and exit
// at once, so the library is mapped only for the last few ms of each
// process's life. Process I (children first, the parent last) prints
// pid_I=PID and plugin_I=0xADDRESS (where burn_in_plugin was loaded): the
// truth the test checks the trace against.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

int loadAndBurn(int index, const char* plugin, uint64_t cpu_ms) {
  void* handle = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  auto burn = reinterpret_cast<uint64_t (*)(uint64_t)>(dlsym(handle, "burn_in_plugin"));
  if (!burn) return 1;
  std::printf("pid_%d=%d\nplugin_%d=%#" PRIxPTR "\n", index, getpid(), index,
              reinterpret_cast<uintptr_t>(burn));
  std::fflush(stdout);
  return burn(cpu_ms) == 0 ? 1 : 0;  // never 0: keeps the loop
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: dlopen_burn PLUGIN CPU_MS CHILDREN\n");
    return 2;
  }
  const uint64_t cpu_ms = std::strtoull(argv[2], nullptr, 10);
  const int children = std::atoi(argv[3]);
  for (int i = 0; i < children; ++i) {
    pid_t child = fork();
    if (child == 0) _exit(loadAndBurn(i, argv[1], cpu_ms));
    if (child < 0) return 1;
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  return loadAndBurn(children, argv[1], cpu_ms);
}
