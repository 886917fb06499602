// StackMemory: the copy of a thread's user stack taken at a sample, as the
// only memory an offline unwinder may read. Reads outside the copy fail
// (they are how a walk learns the copy ran out), never touch other memory.
//
//   StackMemory memory{.sp = sample.user_sp, .bytes = chunk.bytes(column, row)};
//   uint64_t word;
//   if (!memory.read(cfa - 8, word)) stop();
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

namespace incise::analyzer {

struct StackMemory {
  uint64_t sp = 0;                 // address of bytes[0]
  std::span<const uint8_t> bytes;  // what was copied from sp upwards

  bool contains(uint64_t address, uint64_t size) const {
    return address >= sp && size <= bytes.size() && address - sp <= bytes.size() - size;
  }
  bool read(uint64_t address, uint64_t& value) const {
    if (!contains(address, sizeof(value))) return false;
    std::memcpy(&value, bytes.data() + (address - sp), sizeof(value));  // x86-64: little-endian
    return true;
  }
  uint64_t end() const { return sp + bytes.size(); }
};

}  // namespace incise::analyzer
