// Flame graphs drawn from FoldedStacks: a plain SVG, or one self-contained
// HTML file (inline SVG + a little inline JS: click a frame to zoom into it,
// click the root or "reset" to zoom out, a search box that highlights
// matching frames and says what share they cover, a tooltip with the frame's
// weight and percentage). No network, no external files.
//
// Roots are at the bottom (flame, not icicle). Frames narrower than
// min_width_px at full width are left out, as flamegraph.pl does, so the file
// size is bounded by what can be seen.
//
//   FlameGraphOptions options{.title = "app.trace: on-CPU", .unit = "samples"};
//   writeFlameGraphHtml(folded, options, out);
//
// A graph that colours by something other than the name (the differential
// flame graph colours by change) sets options.style:
//   options.style = [&](const std::string& path) { return FrameStyle{"rgb(220,0,0)", "+3%"}; };
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "analyzer/render/folded_stacks.h"
#include "analyzer/render/html_page.h"

namespace incise::analyzer {

// How one frame is drawn: `fill` is a CSS colour (empty: the default colour by
// name); `note` is added to the frame's tooltip.
struct FrameStyle {
  std::string fill;
  std::string note;
};
// Called with the frame's call path, root first, joined by ';' as in FoldedStacks.
using FrameStyler = std::function<FrameStyle(const std::string& path)>;

struct FlameGraphOptions {
  std::string title = "Flame graph";
  std::string unit = "samples";  // what weights count: samples, ns, ...
  int width = 1200;
  int frame_height = 16;
  double min_width_px = 0.1;
  FrameStyler style;  // empty: warm colours by name
};

void writeFlameGraphSvg(const FoldedStacks& folded, const FlameGraphOptions& options,
                        std::ostream& out);
void writeFlameGraphHtml(const FoldedStacks& folded, const FlameGraphOptions& options,
                         std::ostream& out);

}  // namespace incise::analyzer
