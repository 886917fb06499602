#include "recorder/probes/go_goid_offset.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "base/unique_fd.h"

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

// Calls visit(i, die) for the first top-level structure type named
// names[i] in the DWARF of `binary`, stopping once each has been seen.
// `what` prefixes errors.
Status visitStructs(const std::string& binary, std::span<const char* const> names,
                    const std::function<void(size_t, Dwarf_Die*)>& visit, std::string_view what) {
  UniqueFd fd(open(binary.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error(std::string(what) + ": " + binary + ": " + std::strerror(errno));
  Dwarf* dwarf = dwarf_begin(fd.get(), DWARF_C_READ);
  if (dwarf == nullptr)
    return Error(std::string(what) + ": no DWARF in " + binary + " (linked with -w?)");
  std::vector<bool> seen(names.size(), false);
  size_t left = names.size();
  Dwarf_Off cu = 0;
  Dwarf_Off next = 0;
  size_t header_size = 0;
  // Type entries sit at the top level of their unit.
  while (left > 0 && dwarf_nextcu(dwarf, cu, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die unit;
    Dwarf_Die die;
    if (dwarf_offdie(dwarf, cu + header_size, &unit) != nullptr && dwarf_child(&unit, &die) == 0) {
      do {
        if (dwarf_tag(&die) != DW_TAG_structure_type) continue;
        for (size_t i = 0; i < names.size(); ++i) {
          if (seen[i] || !named(&die, names[i])) continue;
          seen[i] = true;
          --left;
          visit(i, &die);
          break;
        }
      } while (left > 0 && dwarf_siblingof(&die, &die) == 0);
    }
    cu = next;
  }
  dwarf_end(dwarf);
  return Status::ok();
}

}  // namespace

Result<GoRuntimeOffsets> goRuntimeOffsets(const std::string& binary) {
  static constexpr const char* kTypes[] = {"runtime.g", "runtime.m"};
  std::optional<uint64_t> goid;
  GoRuntimeOffsets offsets;
  INCISE_RETURN_IF_ERROR(visitStructs(
      binary, kTypes,
      [&](size_t type, Dwarf_Die* die) {
        if (type == 0) {
          goid = memberOffset(die, "goid");
          offsets.g_m = memberOffset(die, "m").value_or(0);
        } else {
          offsets.m_curg = memberOffset(die, "curg").value_or(0);
        }
      },
      "goroutine ids"));
  if (!goid) return Error("goroutine ids: no runtime.g with a goid in the DWARF of " + binary);
  offsets.goid = *goid;
  // Offset 0 of either is another member (g.stack, m.g0): not known.
  if (offsets.g_m == 0 || offsets.m_curg == 0) offsets.g_m = offsets.m_curg = 0;
  return offsets;
}

Result<GoSyncOffsets> goSyncOffsets(const std::string& binary) {
  static constexpr const char* kTypes[] = {"sync.RWMutex", "sync.Cond"};
  GoSyncOffsets offsets;
  INCISE_RETURN_IF_ERROR(visitStructs(
      binary, kTypes,
      [&](size_t type, Dwarf_Die* die) {
        if (type == 0) {
          offsets.rw_writer_sem = memberOffset(die, "writerSem");
          offsets.rw_reader_sem = memberOffset(die, "readerSem");
        } else {
          offsets.cond_notify = memberOffset(die, "notify");
        }
      },
      "go waits"));
  return offsets;
}

Result<uint64_t> goroutineIdOffset(const std::string& binary) {
  Result<GoRuntimeOffsets> offsets = goRuntimeOffsets(binary);
  if (!offsets) return offsets.error();
  return offsets->goid;
}

}  // namespace incise::recorder
