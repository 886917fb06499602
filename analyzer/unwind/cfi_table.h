// CfiTable: the call-frame information of one object, from the .eh_frame
// (and .eh_frame_hdr, for binary search) embedded in the trace, so nothing
// is read from the object's file.
//
// libdw's CFI interpreter (dwarf_cfi_addrframe) wants an Elf: the two
// sections are wrapped in a minimal in-memory ELF (header, the sections at
// their original virtual addresses, a section-name table) opened with
// elf_memory and handed to dwarf_getcfi_elf. Each pc's rules are turned into
// a CfiRule once and cached per ELF virtual address, so a hot pc costs one
// hash lookup. Not thread-safe (one per thread).
//
//   Result<std::unique_ptr<CfiTable>> table = CfiTable::create(object);  // ObjectSymbols
//   if (const CfiRule* rule = (*table)->tryLookup(vaddr)) step(*rule);
#pragma once

#include <elfutils/libdw.h>
#include <libelf.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "format/metadata.h"

namespace incise::analyzer {

// How to find one register of the caller.
struct RegisterRule {
  enum Kind : uint8_t {
    kUndefined,   // not recoverable (for the return address: the outermost frame)
    kSameValue,   // unchanged by this frame
    kExpression,  // `ops`: a location to read, or a value (DW_OP_stack_value / DW_OP_regN)
  };
  Kind kind = kUndefined;
  std::vector<Dwarf_Op> ops;
};

// The shapes almost every compiler-emitted rule has, applied without the
// expression interpreter: CFA = register + offset, and a register saved at
// CFA + offset (or equal to CFA + offset). Offsets wrap like DWARF's
// unsigned arithmetic. Other rules stay kGeneral and are evaluated.
struct SimpleCfa {
  int regno = -1;  // < 0: not simple, evaluate CfiRule::cfa
  uint64_t offset = 0;
};
struct SimpleLocation {
  enum Kind : uint8_t { kGeneral, kSavedAtCfaPlus, kIsCfaPlus };
  Kind kind = kGeneral;
  uint64_t offset = 0;
};
SimpleCfa simpleCfa(std::span<const Dwarf_Op> ops);
SimpleLocation simpleLocation(std::span<const Dwarf_Op> ops);

// The unwind rules at one pc: how to compute the CFA, and how the caller's
// return address and rbp are found from it.
struct CfiRule {
  std::vector<Dwarf_Op> cfa;  // a DWARF expression yielding the CFA
  RegisterRule return_address;
  RegisterRule rbp;
  bool signal_frame = false;
  // The same rules in simple form where they have one.
  SimpleCfa simple_cfa;
  SimpleLocation simple_return_address;
  SimpleLocation simple_rbp;
};

class CfiTable {
 public:
  // An Error when the object carries no .eh_frame or libdw rejects it.
  static Result<std::unique_ptr<CfiTable>> create(const format::ObjectSymbols& object);
  ~CfiTable();
  CfiTable(const CfiTable&) = delete;
  CfiTable& operator=(const CfiTable&) = delete;

  // Rules at ELF virtual address `vaddr`; null when no FDE covers it (code
  // without CFI, or an address outside the object).
  const CfiRule* tryLookup(uint64_t vaddr);

  size_t cachedRules() const { return cache_.size(); }
  // Lookups answered from the cache (hits) and by libdw (the rest).
  uint64_t cacheHits() const { return cache_hits_; }

 private:
  CfiTable() = default;

  std::string image_;  // the synthetic ELF; libelf reads it in place
  Elf* elf_ = nullptr;
  Dwarf_CFI* cfi_ = nullptr;
  // nullopt-like: a present key with no value (has_rule false) is a cached miss.
  struct Entry {
    bool has_rule = false;
    CfiRule rule;
  };
  std::unordered_map<uint64_t, Entry> cache_;
  uint64_t cache_hits_ = 0;
};

// The synthetic ELF around .eh_frame_hdr + .eh_frame (exposed for tests).
std::string buildEhFrameElf(const format::ObjectSymbols& object);

}  // namespace incise::analyzer
