// Per-kind and per-column totals of a trace.
#include "analyzer/inspect/trace_summary.h"

#include <algorithm>
#include <ostream>

#include "analyzer/render/terminal_text.h"

namespace incise::analyzer {

using format::BlockType;
using format::EventKind;

std::string encodingName(format::Encoding encoding) {
  switch (encoding) {
    case format::Encoding::kVarint:
      return "varint";
    case format::Encoding::kDeltaVarint:
      return "delta-varint";
    case format::Encoding::kFixed64:
      return "fixed64";
    case format::Encoding::kBytes:
      return "bytes";
    case format::Encoding::kConstant:
      return "constant";
    case format::Encoding::kPeriodDelta:
      return "period-delta";
    case format::Encoding::kBaseDelta:
      return "base-delta";
  }
  return "unknown";
}

std::string storedEncodingNames(const ColumnTotals& column) {
  if (column.stored_as.empty()) return encodingName(column.encoding);
  std::string names;
  for (format::Encoding encoding : column.stored_as) {
    names += (names.empty() ? "" : "+") + encodingName(encoding);
  }
  return names;
}

TraceSummary summarize(const format::Reader& reader) {
  TraceSummary s;
  for (EventKind kind : format::kAllEventKinds) {
    const format::KindSpec* spec = format::kindSpec(kind);
    KindSummary k{kind, reader.rows(kind), 0, 0, {}};
    for (uint16_t c = 0; c < spec->column_count; ++c) {
      k.columns.push_back(
          ColumnTotals{std::string(spec->columns[c].name), spec->columns[c].encoding});
    }
    for (const auto& ref : reader.chunks(kind)) {
      ++k.chunks;
      k.block_bytes += format::kBlockHeaderSize + ref.length;
      auto sizes = reader.columnSizes(ref);
      if (!sizes) {
        s.errors.push_back(sizes.error().message());
        continue;
      }
      for (const auto& c : *sizes) {
        if (c.id < k.columns.size()) {
          ColumnTotals& column = k.columns[c.id];
          column.raw_bytes += c.raw_bytes;
          column.stored_bytes += c.stored_bytes;
          if (std::find(column.stored_as.begin(), column.stored_as.end(), c.encoding) ==
              column.stored_as.end()) {
            column.stored_as.push_back(c.encoding);
          }
        }
        s.raw_column_bytes += c.raw_bytes;
        s.stored_column_bytes += c.stored_bytes;
      }
      if (kind == EventKind::kLost) {
        auto chunk = reader.readChunk(ref, {format::LostColumn::source, format::LostColumn::count});
        if (!chunk) {
          s.errors.push_back(chunk.error().message());
          continue;
        }
        auto sources = chunk->column(format::LostColumn::source);
        auto counts = chunk->column(format::LostColumn::count);
        for (size_t i = 0; i < chunk->rows(); ++i) s.lost_by_source[sources[i]] += counts[i];
      }
    }
    if (k.rows > 0 || k.chunks > 0) s.kinds.push_back(std::move(k));
  }
  for (const auto& ref : reader.blocks()) {
    if (ref.block_type == BlockType::kStackChunk) {
      ++s.stack_chunks;
      s.stack_block_bytes += format::kBlockHeaderSize + ref.length;
    } else if (ref.block_type == BlockType::kMetadata) {
      ++s.metadata_blocks;
      s.metadata_bytes += format::kBlockHeaderSize + ref.length;
    }
  }
  return s;
}

void printRecovery(std::ostream& out, const format::RecoveryReport& report) {
  if (report.clean()) {
    out << "integrity: clean (footer index used, no damage found)\n";
    return;
  }
  if (!report.used_footer) {
    out << "recovered by scanning: " << terminalText(report.why_scanned) << "\n"
        << "  salvaged " << report.blocks_salvaged << " blocks, " << report.bytes_salvaged << " of "
        << report.file_size << " bytes\n";
  }
  if (report.header_lost) {
    out << "  the trace header is damaged (" << terminalText(report.why_header_lost)
        << "): host, command line and recording options are unknown, times count from the "
           "first event\n";
  }
  if (report.regions_from_copies > 0) {
    out << "  the recorder stopped while merging small chunks: " << report.regions_from_copies
        << " region(s) read from the merged copy it had written\n";
  }
  if (!report.damage.empty()) {
    out << "  damage starts at offset " << report.first_damage << "\n";
    for (const auto& d : report.damage) {
      out << "  damaged: offset " << d.offset << ", " << d.length
          << " bytes: " << terminalText(d.reason) << "\n";
    }
  }
}

nlohmann::json recoveryJson(const format::RecoveryReport& report) {
  nlohmann::json j = {{"clean", report.clean()},
                      {"used_footer", report.used_footer},
                      {"why_scanned", report.why_scanned},
                      {"blocks_salvaged", report.blocks_salvaged},
                      {"bytes_salvaged", report.bytes_salvaged},
                      {"file_size", report.file_size},
                      {"regions_from_copies", report.regions_from_copies},
                      {"header_lost", report.header_lost},
                      {"damage", nlohmann::json::array()}};
  if (!report.damage.empty()) j["first_damage"] = report.first_damage;
  for (const auto& d : report.damage) {
    j["damage"].push_back({{"offset", d.offset}, {"length", d.length}, {"reason", d.reason}});
  }
  return j;
}

}  // namespace incise::analyzer
