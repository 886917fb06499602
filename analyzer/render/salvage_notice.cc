#include "analyzer/render/salvage_notice.h"

#include "analyzer/render/terminal_text.h"

namespace incise::analyzer {

std::optional<std::string> salvageNotice(const std::string& path,
                                         const format::RecoveryReport& report) {
  if (report.clean()) return std::nullopt;
  std::string why = !report.used_footer     ? report.why_scanned
                    : report.damage.empty() ? "damaged"
                                            : report.damage.front().reason;
  std::string text = "warning: " + path + " is damaged (" + why + "): ";
  if (report.header_lost) text += "its header is lost (host, command and options unknown); ";
  if (!report.used_footer) {
    text += "read what " + std::to_string(report.blocks_salvaged) + " intact blocks hold, " +
            std::to_string(report.bytes_salvaged) + " of " + std::to_string(report.file_size) +
            " bytes";
  } else {
    text += "read through its index";
  }
  if (!report.damage.empty()) {
    text += "; " + std::to_string(report.damage.size()) + " damaged region" +
            (report.damage.size() == 1 ? "" : "s") + " from offset " +
            std::to_string(report.first_damage == UINT64_MAX ? report.damage.front().offset
                                                             : report.first_damage);
  }
  text += "; what follows may be incomplete (incise check " + path + " says more)";
  return terminalText(text);
}

std::optional<std::string> damagedChunksNotice(const std::string& path, uint64_t damaged_chunks) {
  if (damaged_chunks == 0) return std::nullopt;
  return terminalText("warning: " + std::to_string(damaged_chunks) + " damaged chunk" +
                      (damaged_chunks == 1 ? " of " : "s of ") + path +
                      " could not be decoded and " + (damaged_chunks == 1 ? "was" : "were") +
                      " skipped; what was written may be incomplete");
}

}  // namespace incise::analyzer
