// VdsoImage: the kernel's vDSO as a file the recorder can read.
//
// Every 64-bit process of a kernel maps the same vDSO image, so the
// recorder's own copy stands for all of them: it is copied into a memfd
// (kept open for the whole recording), which the symbol and unwind-table
// readers open like any object file, and its GNU build-id names the object
// in the trace (the analyzer then finds its embedded symbols, and
// `__vdso_clock_gettime` frames are named instead of `[unknown]`).
//
//   Result<VdsoImage> vdso = VdsoImage::ofThisProcess();
//   if (vdso) table.setVdso(table.object("[vdso]", vdso->buildId(), vdso->path()));
#pragma once

#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

namespace incise::recorder {

class VdsoImage {
 public:
  // Copies the recorder's own [vdso] mapping. An Error when the process has
  // none (vdso=0 on the kernel command line) or it is not an ELF image.
  static Result<VdsoImage> ofThisProcess();

  VdsoImage(VdsoImage&& other) noexcept = default;
  VdsoImage& operator=(VdsoImage&& other) noexcept = default;

  // "/proc/self/fd/N": readable for as long as this object lives.
  const std::string& path() const { return path_; }
  const std::string& buildId() const { return build_id_; }  // raw bytes
  size_t size() const { return size_; }

 private:
  VdsoImage() = default;
  UniqueFd fd_;  // a memfd holding the copy
  std::string path_;
  std::string build_id_;
  size_t size_ = 0;
};

}  // namespace incise::recorder
