// The two functions the recorder's allocation probes trap on
// (bpf/alloc.bpf.c). They do nothing: a uprobe on their first instruction
// reads the arguments from the registers and walks the stack from there, so
// only sampled allocations, and the frees of sampled blocks, cost a trap.
// Their names and argument order are the probes' contract
// (bpf/alloc.h ALLOC_SAMPLED_SYMBOL, FREE_SAMPLED_SYMBOL).
//
//   if (sampled) incise_alloc_sampled(block, size, weight, __builtin_return_address(0));
//   if (sampledBlocks().erase(block)) incise_free_sampled(block);
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// A sampled allocation of `size` bytes at `block`, standing for `weight`
// bytes of the program's allocations (its Poisson weight). `caller` is the
// return address into the code that called the allocator: the recorder cuts
// the stack's frames below it (this library's own).
void incise_alloc_sampled(void* block, size_t size, uint64_t weight, const void* caller);

// A sampled block is freed (or unmapped, or moved by realloc).
void incise_free_sampled(void* block);
}
