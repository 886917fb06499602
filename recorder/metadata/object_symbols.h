// The symbols the recorder embeds for one object that a user frame hit,
// from the richest source on the recording host: the object's own .symtab;
// else its separate debug file (/usr/lib/debug/.build-id/xx/rest.debug, then
// the .gnu_debuglink name next to the object, in its .debug/ folder and
// under /usr/lib/debug), looked for inside the process's root first and then
// in ours, and taken only when its build-id matches; else the object's
// .dynsym. Everything is read while the process (and its root) still exists.
//
// Objects whose table is too big to carry whole, and stripped ones (whose
// .dynsym names few of their functions), embed only the functions their
// frames hit, cut down at the end of the recording (keepHitSymbols). A hit
// that no symbol names embeds the range of the .eh_frame FDE holding it as
// a symbol without a name, so the analyzer shows one row per unnamed
// function instead of one per address.
//
//   HitObject hit{.path = "/usr/lib/x86_64-linux-gnu/libc.so.6",
//                 .open_path = "/proc/4242/root/usr/lib/x86_64-linux-gnu/libc.so.6"};
//   if (embedsHitSubset(hit, limit)) { remember offsets; at the end: }
//   Result<format::ObjectSymbols> object = readObjectSymbols(hit);
//   keepHitSymbols(hit, *object, hit_file_offsets);   // returns the whole table's size
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "base/status.h"
#include "format/metadata.h"

namespace incise::recorder {

// One object file that at least one user frame landed in.
struct HitObject {
  std::string path;       // as in /proc/PID/maps
  std::string open_path;  // where the recorder can read it (/proc/PID/root/..., map_files)
  std::string build_id;   // raw bytes; empty when the object has none
};

// The object's symbols from its richest source (see above), with its
// segments, build-id and debuglink; read through its process's root, falling
// back to the same path in our namespace.
Result<format::ObjectSymbols> readObjectSymbols(const HitObject& hit);

// The separate debug file of a hit object whose own file has no .symtab, as
// a path the recorder can open; nullopt when none is installed.
std::optional<std::string> findDebugFile(const HitObject& hit);

// True when only the symbols its frames hit are embedded: the richest table
// has more than `full_table_limit` entries, or it is a stripped object's
// .dynsym.
bool embedsHitSubset(const HitObject& hit, size_t full_table_limit);

// Cuts `object.symbols` down to those the frames at `file_offsets` (offsets
// in the file, as mapped) hit, adding the FDE range of each hit no symbol
// holds, read from `hit`'s .eh_frame; returns how many symbols the table had
// before.
size_t keepHitSymbols(const HitObject& hit, format::ObjectSymbols& object,
                      std::span<const uint64_t> file_offsets);

}  // namespace incise::recorder
