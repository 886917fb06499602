#include "analyzer/symbolize/frame.h"

namespace incise::analyzer {

std::string_view symbolSourceName(SymbolSource source) {
  switch (source) {
    case SymbolSource::kEmbedded:
      return "embedded";
    case SymbolSource::kLocal:
      return "local";
    case SymbolSource::kDebuginfod:
      return "debuginfod";
    case SymbolSource::kPerfMap:
      return "perfmap";
    case SymbolSource::kKernel:
      return "kernel";
    case SymbolSource::kUnknown:
      return "unknown";
  }
  return "unknown";
}

}  // namespace incise::analyzer
