#include "recorder/metadata/vdso_image.h"

#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "objfile/elf_reader.h"
#include "recorder/metadata/proc_maps.h"

namespace incise::recorder {

namespace {

// The image ends where its mapping does; /proc/self/maps says where that is.
Result<size_t> vdsoSize(uint64_t base) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    ProcMapsLine m;
    if (parseProcMapsLine(line, m) && m.path == "[vdso]" && m.start == base)
      return static_cast<size_t>(m.end - m.start);
  }
  return Error("no [vdso] mapping at the address the auxiliary vector gives");
}

}  // namespace

Result<VdsoImage> VdsoImage::ofThisProcess() {
  const uint64_t base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return Error("vDSO: this process has none (AT_SYSINFO_EHDR is 0)");
  Result<size_t> size = vdsoSize(base);
  if (!size) return size.error().context("vDSO");
  constexpr size_t kMaxVdsoBytes = 1u << 20;  // a few pages on every kernel
  if (*size == 0 || *size > kMaxVdsoBytes) return Error("vDSO: implausible size");
  std::string_view bytes(reinterpret_cast<const char*>(base), *size);
  VdsoImage image;
  image.size_ = *size;
  image.fd_.reset(memfd_create("incise-vdso", MFD_CLOEXEC));
  if (!image.fd_) return Error::fromErrno(errno, "vDSO: memfd_create");
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = write(image.fd_.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error(std::string("vDSO: copy: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  image.path_ = "/proc/self/fd/" + std::to_string(image.fd_.get());
  Result<std::string> id = objfile::readBuildId(image.path_);
  if (!id) return id.error().context("vDSO");
  image.build_id_ = *id;
  return image;
}

}  // namespace incise::recorder
