// The symbols the recorder embeds for one object that a user frame hit: read
// through the hit process's root while it still exists, and, for objects
// whose table is too big to carry whole, cut down at the end of the
// recording to the functions the recorded frames landed in.
//
//   HitObject hit{.path = "/usr/lib/x86_64-linux-gnu/libc.so.6",
//                 .open_path = "/proc/4242/root/usr/lib/x86_64-linux-gnu/libc.so.6"};
//   if (embedsHitSubset(hit, limit)) { remember offsets; later: }
//   Result<format::ObjectSymbols> object = readObjectSymbols(hit);
//   keepHitSymbols(*object, hit_file_offsets);   // "libc.so.6: 41 of 7030 symbols"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>

#include "format/metadata.h"
#include "format/status.h"

namespace incise::recorder {

// One object file that at least one user frame landed in.
struct HitObject {
  std::string path;       // as in /proc/PID/maps
  std::string open_path;  // where the recorder can read it (/proc/PID/root/..., map_files)
  std::string build_id;   // raw bytes; empty when the object has none
};

// The ELF symbol table of a hit object, read through its process's root
// (falling back to the same path in our namespace).
Result<format::ObjectSymbols> readObjectSymbols(const HitObject& hit);

// True when the object's table has more than `full_table_limit` entries, so
// only the symbols its frames hit are embedded (keepHitSymbols at the end).
bool embedsHitSubset(const HitObject& hit, size_t full_table_limit);

// Cuts `object.symbols` down to those the frames at `file_offsets` (offsets
// in the file, as mapped) hit; returns how many the table had before.
size_t keepHitSymbols(format::ObjectSymbols& object,
                      const std::unordered_set<uint64_t>& file_offsets);

}  // namespace incise::recorder
