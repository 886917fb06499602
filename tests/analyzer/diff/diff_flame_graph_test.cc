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

TEST(DiffFlameGraph, RedGrewBlueShrankGreyStayed) {
  Profiles p;
  DiffFlameGraph graph(p.base, p.next);
  // The largest change (a, -35 pp) is full blue; c (+25 pp) a strong red;
  // main did not change: grey, not white on the page's background.
  EXPECT_EQ(graph.style("main;a").fill, "rgb(50,50,255)");
  EXPECT_EQ(graph.style("main;mid;c").fill, "rgb(255,96,96)");
  EXPECT_EQ(graph.style("main").fill, "rgb(215,215,215)");

  std::ostringstream svg;
  graph.writeSvg({}, svg);
  EXPECT_NE(svg.str().find("fill=\"rgb(50,50,255)\""), std::string::npos);
  EXPECT_EQ(svg.str().find("fill=\"rgb(255,255,255)\""), std::string::npos);
}

// Tooltips and the search speak of each trace's own shares: b is 40% of
// the base and 50% of the new samples, never a share of the drawn width
// (which adds the larger share of each path and reaches 135% here).
TEST(DiffFlameGraph, TooltipsGiveEachSidesOwnShare) {
  Profiles p;
  DiffFlameGraph graph(p.base, p.next);
  std::ostringstream svg;
  graph.writeSvg({}, svg);
  const std::string text = svg.str();
  EXPECT_NE(text.find("data-base-total=\"10\" data-new-total=\"8\""), std::string::npos);
  EXPECT_NE(text.find("data-n=\"b\" data-o=\"600000\" data-v=\"500000\" data-d=\"2\" "
                      "data-b=\"4\" data-a=\"4\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<title>b (base 40.00% -&gt; new 50.00%, +10.00 pp)</title>"),
            std::string::npos);
  EXPECT_NE(text.find("<title>c (base 0.00% -&gt; new 25.00%, +25.00 pp)</title>"),
            std::string::npos);
  EXPECT_NE(text.find("<title>all (base 100.00% -&gt; new 100.00%, +0.00 pp)</title>"),
            std::string::npos);
}

// A long title is cut in the middle, keeping both traces' file names.
TEST(DiffFlameGraph, LongTitlesFit) {
  Profiles p;
  DiffFlameGraph graph(p.base, p.next);
  std::string dir = "/var/lib/traces/" + std::string(120, 'd') + "/";
  std::ostringstream svg;
  graph.writeSvg({.title = "incise diff: " + dir + "monday.trace -> " + dir + "today.trace",
                  .subtitle = "width: the larger share of the two"},
                 svg);
  const std::string text = svg.str();
  size_t start = text.find("<text id=\"title\"");
  start = text.find('>', start) + 1;
  std::string title = text.substr(start, text.find("</text>", start) - start);
  EXPECT_EQ(title.rfind("incise diff: /var/lib/traces/", 0), 0u) << title;
  EXPECT_NE(title.find("today.trace"), std::string::npos) << title;
  EXPECT_NE(title.find("\xe2\x80\xa6"), std::string::npos) << title;  // an ellipsis
  // 1180 px at ~9.8 px a character (16 px glyphs).
  EXPECT_LE(title.size() - 2, 121u) << title;
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
