// The self-contained HTML page an interactive graph is written into (the
// latency heat maps): doctype, title, the shared style (tooltip, tool
// bar), the graph's own style, and at the end its inline script. No network,
// no external files. Text from a trace goes through escapeXml (flame_graph.h:
// shown as a terminal shows it, markup characters as entities).
//
//   writeHtmlPageStart(out, "app.trace: latency", "rect.c{stroke:none}");
//   ... the graph's body ...
//   writeHtmlPageEnd(out, kScript);
#pragma once

#include <ostream>
#include <string>

#include "analyzer/render/flame_graph.h"

namespace incise::analyzer {

void writeHtmlPageStart(std::ostream& out, const std::string& title, const std::string& style);
// The tooltip element, the script and the closing tags.
void writeHtmlPageEnd(std::ostream& out, const char* script);

}  // namespace incise::analyzer
