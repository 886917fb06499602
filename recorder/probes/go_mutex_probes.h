// Where to put the uprobes that see a Go binary's sync.Mutex contention
// (bpf/go_mutex.bpf.c): the first instruction and every RET of
// sync.(*Mutex).lockSlow and of sync.(*Mutex).unlockSlow, as file offsets.
//
//   Result<std::optional<GoMutexProbes>> probes = findGoMutexProbes("/srv/bin/server");
//   if (!probes) ...;               // a Go binary whose lockSlow cannot be probed
//   if (!*probes) ...;              // no sync.Mutex in it (not Go, or never used)
//   attach go_lock_slow at probes->lock_slow, go_lock_acquired at each of
//   probes->lock_slow_returns, go_unlock_slow at probes->unlock_slow,
//   go_unlock_done at each of probes->unlock_slow_returns
//
// A uretprobe cannot be used (the runtime copies goroutine stacks, return
// addresses included), so the returns are found in the functions' code. The Go
// compiler (amd64, register ABI) builds a frame the same way in every
// function: a stack check against the goroutine's stack guard through R14,
// `sub $N,%rsp`, and at each return `mov N-8(%rsp),%rbp; add $N,%rsp; ret`
// (Go 1.17-1.20) or `add $N,%rsp; pop %rbp; ret` (1.21 onwards, after
// `push %rbp; mov %rsp,%rbp; sub $N,%rsp`). The epilogue is matched with the
// frame size N read from the prologue, ten (or six) exact bytes, and only
// functions that start with the R14 stack check are taken: that check
// exists only with the register ABI, whose RAX first argument and R14
// goroutine the BPF programs read.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "format/metadata.h"

namespace incise::recorder {

struct GoMutexProbes {
  std::string binary;
  uint64_t lock_slow = 0;                   // file offsets
  std::vector<uint64_t> lock_slow_returns;  // each RET in lockSlow
  uint64_t unlock_slow = 0;
  std::vector<uint64_t> unlock_slow_returns;  // each RET in unlockSlow
};

// nullopt for a binary without lockSlow (not a Go program that uses
// sync.Mutex); an Error names what stops probing one that has it.
// `object`: the binary's symbols, when the caller has read them already.
Result<std::optional<GoMutexProbes>> findGoMutexProbes(const std::string& binary);
Result<std::optional<GoMutexProbes>> findGoMutexProbes(const std::string& binary,
                                                       const format::ObjectSymbols& object);

// A Go function's first instruction and every RET of it, as file offsets.
struct GoFunctionProbe {
  uint64_t entry = 0;
  std::vector<uint64_t> returns;
};
// `function`: a symbol of `object`, read from `binary`; `what` prefixes errors.
Result<GoFunctionProbe> goFunctionProbe(const std::string& binary,
                                        const format::ObjectSymbols& object,
                                        const format::Symbol& function, std::string_view what);
// The symbol named `name` (with an address), or null.
const format::Symbol* findSymbol(const format::ObjectSymbols& object, std::string_view name);

// The offsets, from the function's start, of every RET closing a frame the
// function's prologue opened; an Error when the code is not a register-ABI
// Go function or no epilogue matches.
Result<std::vector<uint64_t>> goFunctionReturns(std::span<const uint8_t> code);

// The functions probed, as Go names them in .symtab.
inline constexpr const char* kGoLockSlow = "sync.(*Mutex).lockSlow";
inline constexpr const char* kGoUnlockSlow = "sync.(*Mutex).unlockSlow";

}  // namespace incise::recorder
