// The `[unwind-stop]` marker: the frame address an offline unwinder puts at
// the root end of a user stack when the walk could not go on (the stack copy
// ran out, no CFI and no frame pointer to follow, a frame that makes no
// sense). It lies in the last page below x86-64's user address limit, which
// is never mapped, so it cannot be a real frame; return-address lookups at
// marker - 1 are recognised too.
//
//   frames.push_back(kUnwindStopAddress);
//   if (isUnwindStop(address)) name = kUnwindStopName;
#pragma once

#include <cstdint>
#include <string_view>

namespace incise::analyzer {

inline constexpr uint64_t kUnwindStopAddress = 0x7ffffffffff0ull;
inline constexpr std::string_view kUnwindStopName = "[unwind-stop]";

inline bool isUnwindStop(uint64_t address) {
  return address >= 0x7ffffffff000ull && address < 0x800000000000ull;
}

}  // namespace incise::analyzer
