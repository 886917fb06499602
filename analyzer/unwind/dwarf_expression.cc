// DWARF expression evaluation for CFI: see dwarf_expression.h.
#include "analyzer/unwind/dwarf_expression.h"

#include <dwarf.h>

#include <string>

namespace incise::analyzer {
namespace {

constexpr size_t kMaxDepth = 64;

class ValueStack {
 public:
  bool push(uint64_t v) {
    if (size_ == kMaxDepth) return false;
    values_[size_++] = v;
    return true;
  }
  bool pop(uint64_t& v) {
    if (size_ == 0) return false;
    v = values_[--size_];
    return true;
  }
  bool top(uint64_t& v) const {
    if (size_ == 0) return false;
    v = values_[size_ - 1];
    return true;
  }
  size_t size() const { return size_; }

 private:
  uint64_t values_[kMaxDepth] = {};
  size_t size_ = 0;
};

Error unsupported(const Dwarf_Op& op) {
  return Error("DWARF expression operation 0x" + std::to_string(op.atom) + " not supported");
}

}  // namespace

Result<ExpressionValue> evaluateExpression(std::span<const Dwarf_Op> ops,
                                           const ExpressionContext& context) {
  ValueStack stack;
  ExpressionValue result;
  if (ops.empty()) return Error("empty DWARF expression");
  // A lone register operation names where the value is: in the register.
  if (ops.size() == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
    uint64_t value = 0;
    if (!context.regs.get(ops[0].atom - DW_OP_reg0, value))
      return Error("register " + std::to_string(ops[0].atom - DW_OP_reg0) + " is not known");
    return ExpressionValue{.value = value, .is_address = false};
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const Dwarf_Op& op = ops[i];
    uint64_t a = 0, b = 0;
    bool ok = true;
    if (op.atom >= DW_OP_lit0 && op.atom <= DW_OP_lit31) {
      ok = stack.push(op.atom - DW_OP_lit0);
    } else if (op.atom >= DW_OP_breg0 && op.atom <= DW_OP_breg31) {
      if (!context.regs.get(op.atom - DW_OP_breg0, a))
        return Error("register " + std::to_string(op.atom - DW_OP_breg0) + " is not known");
      ok = stack.push(a + op.number);
    } else {
      switch (op.atom) {
        case DW_OP_bregx:
          if (!context.regs.get(static_cast<int>(op.number), a))
            return Error("register " + std::to_string(op.number) + " is not known");
          ok = stack.push(a + op.number2);
          break;
        case DW_OP_call_frame_cfa:
          if (!context.cfa_known) return Error("DW_OP_call_frame_cfa before the CFA is known");
          ok = stack.push(context.cfa);
          break;
        case DW_OP_const1u:
        case DW_OP_const1s:
        case DW_OP_const2u:
        case DW_OP_const2s:
        case DW_OP_const4u:
        case DW_OP_const4s:
        case DW_OP_const8u:
        case DW_OP_const8s:
        case DW_OP_constu:
        case DW_OP_consts:
        case DW_OP_addr:
          ok = stack.push(op.number);
          break;
        case DW_OP_dup:
          ok = stack.top(a) && stack.push(a);
          break;
        case DW_OP_drop:
          ok = stack.pop(a);
          break;
        case DW_OP_swap:
          ok = stack.pop(a) && stack.pop(b) && stack.push(a) && stack.push(b);
          break;
        case DW_OP_deref:
          ok = stack.pop(a);
          if (ok && !context.memory.read(a, b)) return Error("read outside the stack copy");
          ok = ok && stack.push(b);
          break;
        case DW_OP_plus_uconst:
          ok = stack.pop(a) && stack.push(a + op.number);
          break;
        case DW_OP_stack_value:
          if (i + 1 != ops.size()) return Error("DW_OP_stack_value before the end");
          result.is_address = false;
          break;
        case DW_OP_nop:
          break;
        default: {
          // Binary operations: b = second, a = top.
          if (!stack.pop(a) || !stack.pop(b)) return Error("DWARF expression stack underflow");
          uint64_t r = 0;
          auto sb = static_cast<int64_t>(b), sa = static_cast<int64_t>(a);
          switch (op.atom) {
            case DW_OP_plus:
              r = b + a;
              break;
            case DW_OP_minus:
              r = b - a;
              break;
            case DW_OP_mul:
              r = b * a;
              break;
            case DW_OP_and:
              r = b & a;
              break;
            case DW_OP_or:
              r = b | a;
              break;
            case DW_OP_xor:
              r = b ^ a;
              break;
            case DW_OP_shl:
              r = a >= 64 ? 0 : b << a;
              break;
            case DW_OP_shr:
              r = a >= 64 ? 0 : b >> a;
              break;
            case DW_OP_ge:
              r = sb >= sa;
              break;
            case DW_OP_gt:
              r = sb > sa;
              break;
            case DW_OP_le:
              r = sb <= sa;
              break;
            case DW_OP_lt:
              r = sb < sa;
              break;
            case DW_OP_eq:
              r = sb == sa;
              break;
            case DW_OP_ne:
              r = sb != sa;
              break;
            default:
              return unsupported(op);
          }
          ok = stack.push(r);
        }
      }
    }
    if (!ok) return Error("DWARF expression stack under- or overflow");
  }
  if (!stack.top(result.value)) return Error("DWARF expression left no value");
  return result;
}

}  // namespace incise::analyzer
