// A small evaluator of the DWARF expressions CFI uses (DWARF 5, 2.5): CFA
// rules, register rules, and the PLT-style expressions glibc and the linker
// emit (breg, lit/const, plus, and, ge, shl, deref, ...). Registers come from
// UnwindRegisters and memory from the stack copy only; anything else (an
// unknown register, an unsupported operation, memory outside the copy, a
// stack underflow) is a failed evaluation, never a crash.
//
//   ExpressionContext context{.regs = regs, .memory = memory, .cfa = cfa};
//   Result<ExpressionValue> v = evaluateExpression(ops, context);
//   if (v && v->is_address) memory.read(v->value, saved);
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <span>

#include "analyzer/unwind/stack_memory.h"
#include "analyzer/unwind/unwind_registers.h"
#include "base/status.h"

namespace incise::analyzer {

struct ExpressionContext {
  const UnwindRegisters& regs;
  const StackMemory& memory;
  uint64_t cfa = 0;
  bool cfa_known = false;
};

struct ExpressionValue {
  uint64_t value = 0;
  // A location (the value is where the register was saved) unless the
  // expression ended in DW_OP_stack_value or named a register (DW_OP_regN).
  bool is_address = true;
};

Result<ExpressionValue> evaluateExpression(std::span<const Dwarf_Op> ops,
                                           const ExpressionContext& context);

}  // namespace incise::analyzer
