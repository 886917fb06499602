#include "preload/ring_area.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace incise::preload {
namespace {

std::atomic<int> g_state{static_cast<int>(AreaState::kNotYet)};
std::atomic<AreaHeader*> g_area{nullptr};

// "FD:TOKEN", decimal and hex, nothing else.
bool parseVariable(const char* text, int* fd, uint64_t* token) {
  if (!text) return false;
  char* end = nullptr;
  unsigned long number = strtoul(text, &end, 10);
  if (end == text || *end != ':' || number > 1u << 20) return false;
  const char* hex = end + 1;
  unsigned long long value = strtoull(hex, &end, 16);
  if (end == hex || *end != '\0') return false;
  *fd = static_cast<int>(number);
  *token = value;
  return true;
}

AreaHeader* mapArea(int fd, uint64_t token) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size < static_cast<off_t>(sizeof(AreaHeader)))
    return nullptr;
  void* first = mmap(nullptr, sizeof(AreaHeader), PROT_READ, MAP_SHARED, fd, 0);
  if (first == MAP_FAILED) return nullptr;
  const auto* header = static_cast<const AreaHeader*>(first);
  uint32_t ring_count = header->ring_count;
  bool ours = header->magic == kAreaMagic && header->token == token &&
              header->version == kLayoutVersion && ring_count != 0 &&
              ring_count <= kMaxThreadRings && header->records_per_ring == kRecordsPerRing &&
              static_cast<uint64_t>(st.st_size) >= areaBytes(ring_count);
  munmap(first, sizeof(AreaHeader));
  if (!ours) return nullptr;
  void* area = mmap(nullptr, areaBytes(ring_count), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return area == MAP_FAILED ? nullptr : static_cast<AreaHeader*>(area);
}

}  // namespace

AreaState areaState() {
  return static_cast<AreaState>(g_state.load(std::memory_order_acquire));
}

AreaHeader* ringArea() {
  return g_area.load(std::memory_order_acquire);
}

void attachRingArea() {
  if (areaState() != AreaState::kNotYet) return;
  int fd = -1;
  uint64_t token = 0;
  AreaHeader* area = nullptr;
  if (parseVariable(getenv(kRingsVariable), &fd, &token)) area = mapArea(fd, token);
  g_area.store(area, std::memory_order_release);
  g_state.store(static_cast<int>(area ? AreaState::kAttached : AreaState::kAbsent),
                std::memory_order_release);
}

}  // namespace incise::preload
