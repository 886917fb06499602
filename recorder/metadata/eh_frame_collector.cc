// The recorder's side of -g dwarf/hybrid CFI: see eh_frame_collector.h.
#include "recorder/metadata/eh_frame_collector.h"

#include "objfile/unwind_tables.h"

namespace incise::recorder {

Status addUnwindTables(const std::string& path, format::ObjectSymbols& object) {
  Result<objfile::UnwindTables> tables = objfile::readUnwindTables(path);
  if (!tables) return tables.error();
  objfile::embedUnwindTables(tables.take(), object);
  return Status::ok();
}

}  // namespace incise::recorder
