#include "recorder/go_goid_offset.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace incise::recorder {
namespace {

// No runtime.g is anywhere near this large; a bigger offset is not a goid.
constexpr Dwarf_Word kMaxGoidOffset = 4096;

bool named(Dwarf_Die* die, const char* name) {
  const char* found = dwarf_diename(die);
  return found != nullptr && std::strcmp(found, name) == 0;
}

// The goid member's offset in the structure `g`.
std::optional<uint64_t> goidMember(Dwarf_Die* g) {
  Dwarf_Die member;
  if (dwarf_child(g, &member) != 0) return std::nullopt;
  do {
    if (dwarf_tag(&member) != DW_TAG_member || !named(&member, "goid")) continue;
    Dwarf_Attribute attribute;
    Dwarf_Word offset = 0;
    if (dwarf_attr(&member, DW_AT_data_member_location, &attribute) == nullptr ||
        dwarf_formudata(&attribute, &offset) != 0 || offset > kMaxGoidOffset)
      return std::nullopt;
    return offset;
  } while (dwarf_siblingof(&member, &member) == 0);
  return std::nullopt;
}

}  // namespace

Result<uint64_t> goroutineIdOffset(const std::string& binary) {
  int fd = open(binary.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error("goroutine ids: " + binary + ": " + std::strerror(errno));
  Dwarf* dwarf = dwarf_begin(fd, DWARF_C_READ);
  if (dwarf == nullptr) {
    close(fd);
    return Error("goroutine ids: no DWARF in " + binary + " (linked with -w?)");
  }
  std::optional<uint64_t> offset;
  Dwarf_Off cu = 0;
  Dwarf_Off next = 0;
  size_t header_size = 0;
  // Type entries sit at the top level of their unit.
  while (!offset && dwarf_nextcu(dwarf, cu, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die unit;
    Dwarf_Die die;
    if (dwarf_offdie(dwarf, cu + header_size, &unit) != nullptr && dwarf_child(&unit, &die) == 0) {
      do {
        if (dwarf_tag(&die) == DW_TAG_structure_type && named(&die, "runtime.g")) {
          offset = goidMember(&die);
          break;
        }
      } while (dwarf_siblingof(&die, &die) == 0);
    }
    cu = next;
  }
  dwarf_end(dwarf);
  close(fd);
  if (!offset) return Error("goroutine ids: no runtime.g with a goid in the DWARF of " + binary);
  return *offset;
}

}  // namespace incise::recorder
