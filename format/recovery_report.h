// RecoveryReport: what the reader salvaged from a file whose footer or
// trailer was missing or damaged, and where the damage is (recovery.h scans).
//
//   const RecoveryReport& r = reader->recovery();
//   if (!r.clean()) warn(r.why_scanned, r.blocks_salvaged, r.first_damage);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace incise::format {

struct Damage {
  uint64_t offset = 0;
  uint64_t length = 0;  // bytes skipped until the next good block (or end of file)
  std::string reason;
};

struct RecoveryReport {
  bool used_footer = true;       // false: the index was rebuilt by scanning
  std::string why_scanned;       // the footer/trailer problem that forced a scan
  uint64_t blocks_salvaged = 0;  // good blocks found by the scan
  uint64_t bytes_salvaged = 0;
  uint64_t file_size = 0;
  uint64_t first_damage = UINT64_MAX;  // offset where the first damage starts
  std::vector<Damage> damage;
  // Regions read from the copy the writer makes while merging small chunks
  // (format/region_merge.h): it was stopped in the middle of a merge.
  uint64_t regions_from_copies = 0;
  // The header block was damaged: the rest was read as this reader's own
  // format, the start is the first event's time, and the host, command
  // line and recording options are unknown (empty).
  bool header_lost = false;
  std::string why_header_lost;
  bool clean() const { return used_footer && damage.empty(); }
};

}  // namespace incise::format
