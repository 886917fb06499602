// The registers an x86-64 user-space unwind tracks: what the recorder keeps
// at each sample (ip, sp, bp), in DWARF numbering for CFI rules.
//
//   UnwindRegisters regs{.ip = s.user_ip, .sp = s.user_sp, .bp = s.user_bp};
//   uint64_t v; if (regs.get(kDwarfRsp, v)) ...
#pragma once

#include <cstdint>

namespace incise::analyzer {

// x86-64 DWARF register numbers (System V psABI, figure 3.36).
inline constexpr int kDwarfRbp = 6;
inline constexpr int kDwarfRsp = 7;
inline constexpr int kDwarfReturnAddress = 16;

struct UnwindRegisters {
  uint64_t ip = 0;
  uint64_t sp = 0;
  uint64_t bp = 0;
  bool bp_known = true;  // false once a frame clobbered rbp without saving it

  // Only rsp and rbp (and the return-address column, = ip) are known.
  bool get(int regno, uint64_t& value) const {
    switch (regno) {
      case kDwarfRsp:
        value = sp;
        return true;
      case kDwarfRbp:
        value = bp;
        return bp_known;
      case kDwarfReturnAddress:
        value = ip;
        return true;
      default:
        return false;
    }
  }
};

}  // namespace incise::analyzer
