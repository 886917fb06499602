#include "recorder/preload_rings.h"

#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <new>

namespace incise::recorder {

Result<std::shared_ptr<PreloadRings>> PreloadRings::create(uint32_t ring_count) {
  if (ring_count == 0 || ring_count > preload::kMaxThreadRings)
    return Error("preload rings: " + std::to_string(ring_count) + " rings (1 to " +
                 std::to_string(preload::kMaxThreadRings) + ")");
  UniqueFd fd(memfd_create("incise-preload-rings", MFD_CLOEXEC));
  if (!fd) return Error::fromErrno(errno, "preload rings: memfd_create");
  const size_t bytes = preload::areaBytes(ring_count);
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0)
    return Error::fromErrno(errno, "preload rings: ftruncate");
  uint64_t token = 0;
  if (getrandom(&token, sizeof(token), 0) != sizeof(token))
    return Error::fromErrno(errno, "preload rings: getrandom");
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (map == MAP_FAILED) return Error::fromErrno(errno, "preload rings: mmap");
  // A fresh memfd reads as zeros: every ring is kFree at position 0.
  auto* area = new (map) preload::AreaHeader{.magic = preload::kAreaMagic,
                                             .token = token,
                                             .version = preload::kLayoutVersion,
                                             .ring_count = ring_count,
                                             .records_per_ring = preload::kRecordsPerRing,
                                             .reserved = 0,
                                             .lost_without_ring = 0};
  return std::shared_ptr<PreloadRings>(new PreloadRings(std::move(fd), area, ring_count, token));
}

PreloadRings::~PreloadRings() {
  munmap(area_, preload::areaBytes(ring_count_));
}

std::string PreloadRings::variable() const {
  char token[17];
  std::snprintf(token, sizeof(token), "%016llx", static_cast<unsigned long long>(token_));
  return std::string(preload::kRingsVariable) + "=" + std::to_string(fd_.get()) + ":" + token;
}

}  // namespace incise::recorder
