#include "recorder/probes/function_code.h"

#include <capstone/capstone.h>

#include <memory>
#include <string>

namespace incise::recorder {
namespace {

struct HandleCloser {
  void operator()(csh* handle) const {
    cs_close(handle);
    delete handle;
  }
};

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(value));
  return text;
}

bool writesRsp(csh handle, const cs_insn& insn) {
  cs_regs read, written;
  uint8_t read_count = 0, written_count = 0;
  if (cs_regs_access(handle, &insn, read, &read_count, written, &written_count) != CS_ERR_OK)
    return true;
  for (uint8_t i = 0; i < written_count; ++i)
    if (written[i] == X86_REG_RSP) return true;
  return false;
}

// The immediate of `sub/add rsp, imm`, when that is what `insn` is.
bool rspImmediate(const cs_insn& insn, int64_t* value) {
  const cs_x86& x86 = insn.detail->x86;
  if (x86.op_count != 2 || x86.operands[0].type != X86_OP_REG ||
      x86.operands[0].reg != X86_REG_RSP || x86.operands[1].type != X86_OP_IMM)
    return false;
  *value = x86.operands[1].imm;
  return true;
}

}  // namespace

Result<FunctionCode> analyzeFunctionCode(std::span<const uint8_t> code, uint64_t address,
                                         uint64_t offset) {
  if (offset >= code.size())
    return Error("offset " + hex(offset) + " is past the function's " +
                 std::to_string(code.size()) + " bytes");
  std::unique_ptr<csh, HandleCloser> handle(new csh{});
  if (cs_open(CS_ARCH_X86, CS_MODE_64, handle.get()) != CS_ERR_OK)
    return Error("cannot start the x86-64 disassembler");
  cs_option(*handle, CS_OPT_DETAIL, CS_OPT_ON);
  cs_insn* insn = cs_malloc(*handle);
  std::unique_ptr<cs_insn, void (*)(cs_insn*)> owned(insn, [](cs_insn* i) { cs_free(i, 1); });

  FunctionCode result;
  const uint8_t* bytes = code.data();
  size_t left = code.size();
  uint64_t pc = address;
  bool offset_seen = offset == 0;
  bool straight = true;  // still on the straight-line start
  int64_t pushed = 0;
  while (left > 0) {
    uint64_t at = pc - address;
    if (!offset_seen && at > offset)
      return Error("offset " + hex(offset) + " is inside an instruction (the one at +" +
                   hex(at - insn->size) + ")");
    if (at == offset) {
      offset_seen = true;
      if (!straight)
        return Error("cannot tell the stack depth at +" + hex(offset) +
                     ": a jump comes before it; probe an offset in the function's straight-line "
                     "start");
      result.sp_delta = static_cast<uint64_t>(pushed);
    }
    if (!cs_disasm_iter(*handle, &bytes, &left, &pc, insn)) {
      // Padding or data after the code: the returns found so far are all.
      if (!offset_seen)
        return Error("cannot decode the instruction at +" + hex(at) + " before +" + hex(offset));
      break;
    }
    if (insn->id == X86_INS_RET) result.returns.push_back(at);
    if (offset_seen) continue;
    int64_t immediate = 0;
    switch (insn->id) {
      case X86_INS_PUSH:
        pushed += 8;
        break;
      case X86_INS_POP:
        pushed -= 8;
        break;
      case X86_INS_CALL:
        break;  // returns with rsp where it was
      case X86_INS_SUB:
      case X86_INS_ADD:
        if (rspImmediate(*insn, &immediate)) {
          pushed += insn->id == X86_INS_SUB ? immediate : -immediate;
        } else if (writesRsp(*handle, *insn)) {
          straight = false;
        }
        break;
      case X86_INS_JMP:
      case X86_INS_RET:
        straight = false;
        break;
      default:
        // A conditional jump's fall-through is the path that reaches the
        // offset (Go's stack check jumps to morestack and comes back to the
        // start); anything else that moves rsp is not followed.
        if (writesRsp(*handle, *insn)) straight = false;
        break;
    }
  }
  if (!offset_seen) return Error("offset " + hex(offset) + " is past the function's code");
  return result;
}

}  // namespace incise::recorder
