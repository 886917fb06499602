// PreloadRings: the recorder's side of the shared memory with
// libincise-preload.so (preload/ring_layout.h): a memfd, created before the
// command is forked and inherited by it, mapped here for draining. Its
// header carries a random token that the library compares with the one in
// INCISE_PRELOAD_RINGS, so a descriptor number reused by the program for
// another file is never taken for the rings. Everything in the area is
// written by the recorded program: the drain bounds every position and
// value it reads (recorder/sources/preload_lock_source.h).
//
//   Result<std::shared_ptr<PreloadRings>> rings = PreloadRings::create();
//   environment.variables.push_back(rings->variable());   // "INCISE_PRELOAD_RINGS=5:3fa..."
//   environment.inherited_fds.push_back(rings->fd());
//   preload::ThreadRing* ring = rings->ring(0);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "base/unique_fd.h"
#include "preload/ring_layout.h"

namespace incise::recorder {

class PreloadRings {
 public:
  static Result<std::shared_ptr<PreloadRings>> create(
      uint32_t ring_count = preload::kMaxThreadRings);
  PreloadRings(const PreloadRings&) = delete;
  PreloadRings& operator=(const PreloadRings&) = delete;
  ~PreloadRings();

  int fd() const { return fd_.get(); }
  // NAME=VALUE for the command's environment.
  std::string variable() const;
  uint32_t ringCount() const { return ring_count_; }
  preload::AreaHeader* area() { return area_; }
  preload::ThreadRing* ring(uint32_t index) { return preload::ringAt(area_, index); }

 private:
  PreloadRings(UniqueFd fd, preload::AreaHeader* area, uint32_t ring_count, uint64_t token)
      : fd_(std::move(fd)), area_(area), ring_count_(ring_count), token_(token) {}

  UniqueFd fd_;
  preload::AreaHeader* area_;
  uint32_t ring_count_;
  uint64_t token_;
};

}  // namespace incise::recorder
