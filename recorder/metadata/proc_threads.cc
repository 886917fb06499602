#include "recorder/metadata/proc_threads.h"

#include <unistd.h>

namespace incise::recorder {

bool ProcThreads::isThreadOf(uint32_t pid, uint32_t tid) {
  if (pid == 0 || tid == 0) return false;
  uint64_t key = (uint64_t{pid} << 32) | tid;
  auto [it, fresh] = known_.try_emplace(key, false);
  if (fresh) {
    std::string path = proc_root_ + "/" + std::to_string(pid) + "/task/" + std::to_string(tid);
    it->second = access(path.c_str(), F_OK) == 0;
  }
  return it->second;
}

void ProcThreads::forget(uint32_t tid) {
  std::erase_if(known_, [&](const auto& entry) { return (entry.first & 0xffffffffu) == tid; });
}

}  // namespace incise::recorder
