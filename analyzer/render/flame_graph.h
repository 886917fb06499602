// Flame graphs drawn from FoldedStacks: a standalone SVG or one
// self-contained HTML file, both interactive with no network and no external
// files: click a frame to zoom into it (click the root, "Reset Zoom" or
// Escape to zoom out), search by regular expression (the HTML's search box;
// in the SVG "Search" at the top right or Ctrl-F, as in flamegraph.pl) with
// the share of the total that the matches cover, and each frame's weight and
// share in its tooltip. An SVG also shows the hovered frame on its last line.
//
// Roots are at the bottom (flame, not icicle). Frames narrower than
// min_width_px at full width are left out, as flamegraph.pl does, so the file
// size is bounded by what can be seen. Labels are cut to fit their frames:
// the script measures the font's glyph width in the viewer and refits them;
// before it runs (or with scripts off) they are cut for 7.3 px per
// character, a little wider than the 7.2 px Chromium draws 12 px monospace
// with.
//
// Every name from the trace is escaped for XML: it is shown as reports
// print it (terminalText: control characters and bytes that are not UTF-8
// as "\xNN", C1 and bidi controls as "\u{NNNN}"; XML 1.0 allows no control
// character other than tab and newline, not even as a reference), U+FFFE and
// U+FFFF as "\u{fffe}"/"\u{ffff}", markup characters as entities, so the
// output is well-formed whatever the names hold.
//
//   FlameGraphOptions options{.title = "app.trace: on-CPU", .unit = "samples"};
//   writeFlameGraphHtml(folded, options, out);
//   options = {.title = "off-CPU", .weights = FlameWeights::kNanoseconds,
//              .palette = FlamePalette::kOffCpu};   // tooltips say "1.250 ms"
//
// A graph that colours by something other than the name (the differential
// flame graph colours by change) sets options.style; one that compares two
// profiles sets options.comparison, and the tooltips and the search then give
// each side's own share instead of a share of the drawn total.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "analyzer/render/folded_stacks.h"

namespace incise::analyzer {

// How one frame is drawn: `fill` is a CSS colour (empty: the palette's colour
// for the name); `note` is added to the frame's tooltip.
struct FrameStyle {
  std::string fill;
  std::string note;
};
// Called with the frame's call path, root first, joined by ';' as in FoldedStacks.
using FrameStyler = std::function<FrameStyle(const std::string& path)>;

// Colours by name: warm for CPU, blues for off-CPU time, purples for lock
// waits (flamegraph.pl's hot, io and purple palettes), so a glance tells
// which kind of graph it is.
enum class FlamePalette { kCpu, kOffCpu, kLocks };

// What weights are: counts shown with `unit`, or ns shown as durations.
enum class FlameWeights { kCount, kNanoseconds };

// Two profiles drawn as one graph: each frame's weight under its call path in
// each profile (`weights(path)` -> {base, new}) and each profile's total.
struct FlameComparison {
  std::string base_label = "base";
  std::string new_label = "new";
  uint64_t base_total = 0;
  uint64_t new_total = 0;
  std::function<std::pair<uint64_t, uint64_t>(const std::string& path)> weights;
};

struct FlameGraphOptions {
  std::string title = "Flame graph";
  std::string subtitle;          // a smaller second line (a legend); may be empty
  std::string unit = "samples";  // what count weights count
  FlameWeights weights = FlameWeights::kCount;
  FlamePalette palette = FlamePalette::kCpu;
  int width = 1200;
  int frame_height = 16;
  double min_width_px = 0.1;
  FrameStyler style;  // empty: the palette's colours by name
  std::optional<FlameComparison> comparison;
};

void writeFlameGraphSvg(const FoldedStacks& folded, const FlameGraphOptions& options,
                        std::ostream& out);
void writeFlameGraphHtml(const FoldedStacks& folded, const FlameGraphOptions& options,
                         std::ostream& out);

// Text for XML content and attribute values: as terminalText shows it, with
// U+FFFE/U+FFFF escaped too and &, <, >, " and ' as entities.
std::string escapeXml(const std::string& text);

}  // namespace incise::analyzer
