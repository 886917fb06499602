// What `incise info` reports about a trace, gathered once from a Reader:
// rows, chunks and bytes per kind and per column, the stack table's size,
// and lost events per source (the sum of the kLost rows). Also the shared
// rendering of a RecoveryReport, which info and check both print.
//
//   TraceSummary s = summarize(reader);
//   for (const auto& k : s.kinds) out << kindName(k.kind) << " " << k.rows << "\n";
//   printRecovery(out, reader.recovery());
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "format/reader.h"

namespace incise::analyzer {

struct ColumnTotals {
  std::string name;
  format::Encoding encoding{};              // declared by the kind (format/event_kinds.h)
  std::vector<format::Encoding> stored_as;  // what the chunks used, in first-seen order
  uint64_t raw_bytes = 0;
  uint64_t stored_bytes = 0;
};

struct KindSummary {
  format::EventKind kind{};
  uint64_t rows = 0;
  uint64_t chunks = 0;
  uint64_t block_bytes = 0;  // headers and payloads of its chunks
  std::vector<ColumnTotals> columns;
};

struct TraceSummary {
  std::vector<KindSummary> kinds;  // kinds with rows, in id order
  uint64_t stack_chunks = 0;
  uint64_t stack_block_bytes = 0;
  uint64_t metadata_blocks = 0;
  uint64_t metadata_bytes = 0;
  uint64_t raw_column_bytes = 0;
  uint64_t stored_column_bytes = 0;
  std::map<uint64_t, uint64_t> lost_by_source;  // LostSource -> events
  std::vector<std::string> errors;              // chunks that could not be read
};

TraceSummary summarize(const format::Reader& reader);

std::string encodingName(format::Encoding encoding);
// The encodings a column's chunks were stored with, "+"-joined ("varint+constant":
// a column the writer stored as one value where it could); the declared one without chunks.
std::string storedEncodingNames(const ColumnTotals& column);
void printRecovery(std::ostream& out, const format::RecoveryReport& report);
nlohmann::json recoveryJson(const format::RecoveryReport& report);

}  // namespace incise::analyzer
