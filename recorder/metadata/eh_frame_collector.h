// What offline CFI unwinding (-g dwarf / hybrid) needs from each object a
// sample hit: its .eh_frame and .eh_frame_hdr, bytes and virtual addresses,
// copied into the object's format::ObjectSymbols so the analyzer never needs
// the binary. Objects without .eh_frame (rare on x86-64) are left as they are.
// The ELF reading itself is objfile/unwind_tables.h (shared with the
// analyzer's tests); this is the recorder's policy on top of it.
//
//   Result<format::ObjectSymbols> object = readObjectSymbols(hit);
//   if (Status s = addUnwindTables(hit.open_path, *object); !s) note(s.message());
#pragma once

#include <string>

#include "base/status.h"
#include "format/metadata.h"

namespace incise::recorder {

// Fills object.eh_frame* from the ELF file at `path`. An Error when the file
// cannot be read as ELF; OK (fields empty) when it has no .eh_frame.
Status addUnwindTables(const std::string& path, format::ObjectSymbols& object);

}  // namespace incise::recorder
