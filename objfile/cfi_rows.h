// CfiRows: how to find the caller's frame at every address of an x86-64
// object, from its .eh_frame — the table an in-kernel unwinder searches.
//
// Each FDE's call-frame program is run once, and every row it produces is
// reduced to the three rules a frame step needs on x86-64: where the CFA is
// (rsp + n, rbp + n, *(reg + n), or the PLT's expression), where the
// caller's rbp was saved (if it was), and whether a return address exists at
// CFA - 8 (it does not in _start and clone3: the outermost frames). Rows
// whose rules say the same are merged; addresses no FDE covers get a gap
// row. The result is sorted by address, one rule per address range:
//
//   Result<CfiRows> rows = buildCfiRows(eh_frame_bytes, eh_frame_vaddr);
//   // rows->rows[i] holds from rows->rows[i].address to rows->rows[i+1].address
//
// The section is distrusted: every length, pointer and offset is bounded
// by the bytes in hand; a malformed entry is skipped and counted, never
// read past.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace incise::objfile {

enum class CfaRule : uint8_t {
  kNone,         // no FDE covers the address (a gap between functions, or asm without CFI)
  kRspOffset,    // CFA = rsp + offset
  kRbpOffset,    // CFA = rbp + offset
  kDerefRsp,     // CFA = *(rsp + offset) (stack realignment)
  kDerefRbp,     // CFA = *(rbp + offset)
  kPlt,          // the PLT's expression: rsp + 8, + 8 more when (rip & 15) >= offset
  kSignalFrame,  // a signal trampoline (__restore_rt): the registers are in the ucontext at rsp
  kOutermost,    // the return address is undefined: the stack ends here
  kUnsupported,  // a rule outside the shapes above
};

enum class RbpRule : uint8_t {
  kUnchanged,  // rbp keeps its value in the caller
  kAtCfa,      // the caller's rbp is saved at CFA + rbp_offset
  kAtRbp,      // ... at rbp + rbp_offset (frames whose CFA is an expression)
  kUnknown,    // a rule outside these: the caller's rbp is not known
};

struct CfiRow {
  uint64_t address = 0;  // ELF virtual address where the rule starts
  CfaRule cfa = CfaRule::kNone;
  RbpRule rbp = RbpRule::kUnchanged;
  int64_t offset = 0;      // of the CFA rule (kPlt: the rip & 15 threshold)
  int64_t rbp_offset = 0;  // of the rbp rule

  bool sameRule(const CfiRow& other) const {
    return cfa == other.cfa && rbp == other.rbp && offset == other.offset &&
           rbp_offset == other.rbp_offset;
  }
};

struct CfiRowStats {
  uint64_t fdes = 0;              // FDEs whose program ran
  uint64_t skipped_entries = 0;   // malformed CIEs/FDEs, or FDEs of an unknown CIE
  uint64_t unsupported_rows = 0;  // rows kept as kUnsupported
};

struct CfiRows {
  std::vector<CfiRow> rows;  // sorted by address, no two neighbours alike
  CfiRowStats stats;
};

// An Error only when nothing can be read at all (an empty section);
// malformed entries are skipped and counted in stats.
Result<CfiRows> buildCfiRows(std::string_view eh_frame, uint64_t eh_frame_vaddr);

}  // namespace incise::objfile
