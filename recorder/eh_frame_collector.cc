// Copies .eh_frame and .eh_frame_hdr out of an ELF file: see eh_frame_collector.h.
#include "recorder/eh_frame_collector.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace incise::recorder {
namespace {

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};

// .eh_frame of a large binary (node: a few MB) is the biggest thing we copy.
constexpr size_t kMaxEhFrameBytes = 64u << 20;

}  // namespace

Status addUnwindTables(const std::string& path, format::ObjectSymbols& object) {
  static const bool ready = elf_version(EV_CURRENT) != EV_NONE;
  if (!ready) return Error("libelf: " + std::string(elf_errmsg(-1)));
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(path + ": " + std::strerror(errno));
  std::unique_ptr<Elf, ElfCloser> elf(elf_begin(fd, ELF_C_READ, nullptr));
  auto close_fd = std::unique_ptr<int, void (*)(int*)>(&fd, [](int* f) { close(*f); });
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return Error(path + ": not an ELF file");
  size_t names = 0;
  if (elf_getshdrstrndx(elf.get(), &names) != 0) return Error(path + ": no section names");
  for (Elf_Scn* section = elf_nextscn(elf.get(), nullptr); section != nullptr;
       section = elf_nextscn(elf.get(), section)) {
    GElf_Shdr header{};
    if (gelf_getshdr(section, &header) == nullptr || header.sh_type == SHT_NOBITS) continue;
    const char* name = elf_strptr(elf.get(), names, header.sh_name);
    if (name == nullptr) continue;
    bool frame = std::strcmp(name, ".eh_frame") == 0;
    bool frame_header = std::strcmp(name, ".eh_frame_hdr") == 0;
    if (!frame && !frame_header) continue;
    Elf_Data* data = elf_rawdata(section, nullptr);
    if (data == nullptr || data->d_buf == nullptr || data->d_size > kMaxEhFrameBytes) continue;
    std::string bytes(static_cast<const char*>(data->d_buf), data->d_size);
    if (frame) {
      object.eh_frame = std::move(bytes);
      object.eh_frame_vaddr = header.sh_addr;
    } else {
      object.eh_frame_hdr = std::move(bytes);
      object.eh_frame_hdr_vaddr = header.sh_addr;
    }
  }
  return Status::ok();
}

}  // namespace incise::recorder
