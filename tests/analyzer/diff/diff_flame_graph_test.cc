// The differential flame graph: shares per path, widths (the larger share),
// colours (red grew, blue shrank) and tooltips.
#include "analyzer/diff/diff_flame_graph.h"

#include <gtest/gtest.h>

#include <sstream>

namespace incise::analyzer {
namespace {

struct Profiles {
  FoldedStacks base, next;
  Profiles() {
    base.add({"main", "a"}, 6);
    base.add({"main", "b"}, 4);
    next.add({"main", "a"}, 2);
    next.add({"main", "b"}, 4);
    next.add({"main", "mid", "c"}, 2);
  }
};

TEST(DiffFlameGraph, SharesAndChanges) {
  Profiles p;
  DiffFlameGraph graph(p.base, p.next);
  EXPECT_DOUBLE_EQ(graph.baseShare("main;a"), 0.6);
  EXPECT_DOUBLE_EQ(graph.newShare("main;a"), 0.25);
  EXPECT_DOUBLE_EQ(graph.change("main;a"), -0.35);
  EXPECT_DOUBLE_EQ(graph.change("main;mid"), 0.25);
  EXPECT_DOUBLE_EQ(graph.change("main"), 0.0);
  EXPECT_DOUBLE_EQ(graph.change("main;gone"), 0.0);
}

TEST(DiffFlameGraph, WidthsAreTheLargerShare) {
  Profiles p;
  DiffFlameGraph graph(p.base, p.next);
  const auto& paths = graph.combined().paths();
  EXPECT_EQ(paths.at("main;a"), 600'000u);
  EXPECT_EQ(paths.at("main;b"), 500'000u);
  EXPECT_EQ(paths.at("main;mid;c"), 250'000u);
  EXPECT_EQ(graph.combined().total(), 1'350'000u);
}

TEST(DiffFlameGraph, RedGrewBlueShrank) {
  Profiles p;
  DiffFlameGraph graph(p.base, p.next);
  // The largest change (a, -35 pp) is full blue; c (+25 pp) a strong red.
  EXPECT_EQ(graph.style("main;a").fill, "rgb(55,55,255)");
  EXPECT_EQ(graph.style("main;mid;c").fill, "rgb(255,112,112)");
  EXPECT_EQ(graph.style("main").fill, "rgb(255,255,255)");
  EXPECT_EQ(graph.style("main;b").note, "base 40.00% -> new 50.00% (+10.00 pp)");

  std::ostringstream svg;
  graph.writeSvg({}, svg);
  EXPECT_NE(svg.str().find("fill=\"rgb(55,55,255)\""), std::string::npos);
  EXPECT_NE(svg.str().find("data-n=\"c\" data-o=\"1100000\" data-v=\"250000\" data-d=\"3\" "
                           "data-note=\"base 0.00% -&gt; new 25.00% (+25.00 pp)\""),
            std::string::npos)
      << svg.str();
}

TEST(DiffFlameGraph, EmptyProfilesDrawNothingBroken) {
  FoldedStacks empty;
  DiffFlameGraph graph(empty, empty);
  EXPECT_EQ(graph.combined().total(), 0u);
  std::ostringstream html;
  graph.writeHtml({}, html);
  EXPECT_NE(html.str().find("</html>"), std::string::npos);
}

}  // namespace
}  // namespace incise::analyzer
