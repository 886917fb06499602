#include "recorder/probes/go_goid_offset.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace incise::recorder {
namespace {

// No runtime.g or runtime.m is anywhere near this large; a bigger offset
// is not a member of theirs.
constexpr Dwarf_Word kMaxMemberOffset = 4096;

bool named(Dwarf_Die* die, const char* name) {
  const char* found = dwarf_diename(die);
  return found != nullptr && std::strcmp(found, name) == 0;
}

// The offset of member `name` in the structure `type`.
std::optional<uint64_t> memberOffset(Dwarf_Die* type, const char* name) {
  Dwarf_Die member;
  if (dwarf_child(type, &member) != 0) return std::nullopt;
  do {
    if (dwarf_tag(&member) != DW_TAG_member || !named(&member, name)) continue;
    Dwarf_Attribute attribute;
    Dwarf_Word offset = 0;
    if (dwarf_attr(&member, DW_AT_data_member_location, &attribute) == nullptr ||
        dwarf_formudata(&attribute, &offset) != 0 || offset > kMaxMemberOffset)
      return std::nullopt;
    return offset;
  } while (dwarf_siblingof(&member, &member) == 0);
  return std::nullopt;
}

}  // namespace

Result<GoRuntimeOffsets> goRuntimeOffsets(const std::string& binary) {
  int fd = open(binary.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error("goroutine ids: " + binary + ": " + std::strerror(errno));
  Dwarf* dwarf = dwarf_begin(fd, DWARF_C_READ);
  if (dwarf == nullptr) {
    close(fd);
    return Error("goroutine ids: no DWARF in " + binary + " (linked with -w?)");
  }
  std::optional<uint64_t> goid;
  GoRuntimeOffsets offsets;
  bool seen_g = false, seen_m = false;
  Dwarf_Off cu = 0;
  Dwarf_Off next = 0;
  size_t header_size = 0;
  // Type entries sit at the top level of their unit.
  while (!(seen_g && seen_m) &&
         dwarf_nextcu(dwarf, cu, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die unit;
    Dwarf_Die die;
    if (dwarf_offdie(dwarf, cu + header_size, &unit) != nullptr && dwarf_child(&unit, &die) == 0) {
      do {
        if (dwarf_tag(&die) != DW_TAG_structure_type) continue;
        if (!seen_g && named(&die, "runtime.g")) {
          seen_g = true;
          goid = memberOffset(&die, "goid");
          offsets.g_m = memberOffset(&die, "m").value_or(0);
        } else if (!seen_m && named(&die, "runtime.m")) {
          seen_m = true;
          offsets.m_curg = memberOffset(&die, "curg").value_or(0);
        }
      } while (!(seen_g && seen_m) && dwarf_siblingof(&die, &die) == 0);
    }
    cu = next;
  }
  dwarf_end(dwarf);
  close(fd);
  if (!goid) return Error("goroutine ids: no runtime.g with a goid in the DWARF of " + binary);
  offsets.goid = *goid;
  // Offset 0 of either is another member (g.stack, m.g0): not known.
  if (offsets.g_m == 0 || offsets.m_curg == 0) offsets.g_m = offsets.m_curg = 0;
  return offsets;
}

Result<uint64_t> goroutineIdOffset(const std::string& binary) {
  Result<GoRuntimeOffsets> offsets = goRuntimeOffsets(binary);
  if (!offsets) return offsets.error();
  return offsets->goid;
}

}  // namespace incise::recorder
