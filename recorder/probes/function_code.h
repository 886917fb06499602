// What a function's machine code says about probing it (x86-64, read with
// Capstone): the offsets of its RET instructions, where a Go function's
// return is probed (a uretprobe's swapped return address breaks when the Go
// runtime copies the goroutine's stack), and how many bytes the function has
// pushed when it reaches a probed offset inside it, so a probe at
// FUNC+OFFSET still keys the call by its stack pointer at entry.
//
//   Result<FunctionCode> code = analyzeFunctionCode(bytes, 0x401000, 4);
//   code->returns;      // {0x2a, 0x51}: offsets of each RET from the function's start
//   code->sp_delta;     // 8 after `push %rbp`
//
// The stack depth is followed along the straight-line start of the function
// only (push, pop, sub/add of an immediate to rsp, calls); an offset after a
// jump, inside an instruction or after anything else that moves rsp is an
// error that says why.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace incise::recorder {

struct FunctionCode {
  std::vector<uint64_t> returns;  // offsets of RET instructions from the start
  uint64_t sp_delta = 0;          // bytes pushed between the start and `offset`
};

// `code`: the function's bytes (its symbol's size), `address` its virtual
// address (for messages), `offset` where the start probe goes.
Result<FunctionCode> analyzeFunctionCode(std::span<const uint8_t> code, uint64_t address,
                                         uint64_t offset);

}  // namespace incise::recorder
