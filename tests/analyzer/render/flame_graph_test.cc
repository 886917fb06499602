#include "analyzer/render/flame_graph.h"

#include <gtest/gtest.h>

#include <sstream>

namespace incise::analyzer {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

FoldedStacks sample() {
  FoldedStacks folded;
  folded.add({"main", "parse<int>", "memcpy"}, 3);
  folded.add({"main", "a&b \"q\""}, 1);
  return folded;
}

TEST(FlameGraphTest, HtmlIsSelfContainedAndInteractive) {
  std::ostringstream out;
  writeFlameGraphHtml(sample(), {.title = "t <1>"}, out);
  std::string html = out.str();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(html, "<svg"), 1u);
  EXPECT_EQ(count(html, "</svg>"), 1u);
  EXPECT_EQ(count(html, "<script>"), 1u);
  EXPECT_EQ(count(html, "</html>"), 1u);
  EXPECT_NE(html.find("id=\"search\""), std::string::npos);
  // Nothing fetched from the network.
  EXPECT_EQ(count(html, "http"), count(html, "http://www.w3.org/2000/svg"));
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  // Names escaped, raw specials never appear inside names.
  EXPECT_NE(html.find("data-n=\"parse&lt;int&gt;\""), std::string::npos);
  EXPECT_NE(html.find("data-n=\"a&amp;b &quot;q&quot;\""), std::string::npos);
  EXPECT_EQ(html.find("parse<int>"), std::string::npos);
  EXPECT_NE(html.find("<title>t &lt;1&gt;</title>"), std::string::npos);
}

TEST(FlameGraphTest, OneFramePerNodeWithWeightsAndPercent) {
  std::ostringstream out;
  writeFlameGraphSvg(sample(), {}, out);
  std::string svg = out.str();
  // all, main, parse<int>, memcpy, a&b"q"
  EXPECT_EQ(count(svg, "<g class=\"f\""), 5u);
  EXPECT_NE(svg.find("data-n=\"all\" data-o=\"0\" data-v=\"4\" data-d=\"0\""), std::string::npos);
  EXPECT_NE(svg.find("data-n=\"main\" data-o=\"0\" data-v=\"4\" data-d=\"1\""), std::string::npos);
  // Children left to right in name order: "a&b..." before "parse<int>".
  EXPECT_NE(svg.find("data-n=\"parse&lt;int&gt;\" data-o=\"1\" data-v=\"3\" data-d=\"2\""),
            std::string::npos);
  EXPECT_NE(svg.find("<title>memcpy (3 samples, 75.00%)</title>"), std::string::npos);
}

// A standalone SVG zooms and searches as flamegraph.pl's do: its own script
// (in CDATA, so the XML parser never reads it) and its own controls.
TEST(FlameGraphTest, SvgIsInteractiveOnItsOwn) {
  std::ostringstream out;
  writeFlameGraphSvg(sample(), {}, out);
  std::string svg = out.str();
  EXPECT_EQ(count(svg, "<script type=\"text/ecmascript\"><![CDATA["), 1u);
  EXPECT_EQ(count(svg, "]]></script>"), 1u);
  EXPECT_EQ(count(svg, "]]>"), 1u) << "the script must not end the CDATA section early";
  EXPECT_NE(svg.find("id=\"search-button\""), std::string::npos);
  EXPECT_NE(svg.find("id=\"unzoom\""), std::string::npos);
  EXPECT_NE(svg.find("id=\"details\""), std::string::npos);
  EXPECT_LT(svg.rfind("<script"), svg.rfind("</svg>"));
  // The HTML page draws its own controls: the inline SVG has none of these.
  std::ostringstream page;
  writeFlameGraphHtml(sample(), {}, page);
  EXPECT_EQ(page.str().find("id=\"search-button\""), std::string::npos);
  EXPECT_EQ(page.str().find("CDATA"), std::string::npos);
}

// Off-CPU and lock graphs weigh ns: tooltips and the total say durations,
// and each kind has its own colours.
TEST(FlameGraphTest, DurationsAndPalettes) {
  FoldedStacks folded;
  folded.add({"main", "read"}, 5'500'925'959);
  folded.add({"main", "poll"}, 1'250'000);
  FlameGraphOptions options{.weights = FlameWeights::kNanoseconds,
                            .palette = FlamePalette::kOffCpu};
  std::ostringstream svg;
  writeFlameGraphSvg(folded, options, svg);
  EXPECT_NE(svg.str().find("<title>read (5.501 s, 99.98%)</title>"), std::string::npos)
      << svg.str();
  EXPECT_NE(svg.str().find("<title>poll (1.250 ms, 0.02%)</title>"), std::string::npos);
  EXPECT_NE(svg.str().find("data-unit=\"ns\""), std::string::npos);
  EXPECT_EQ(svg.str().find("5500925959 ns"), std::string::npos);
  std::ostringstream html;
  writeFlameGraphHtml(folded, options, html);
  EXPECT_NE(html.str().find("total 5.502 s"), std::string::npos);

  auto fills = [&](FlamePalette palette) {
    std::ostringstream out;
    writeFlameGraphSvg(folded, {.palette = palette}, out);
    std::string text = out.str();
    size_t at = text.find("data-n=\"read\"");
    size_t fill = text.find("fill=\"rgb(", at);
    return text.substr(fill, text.find('"', fill + 6) - fill);
  };
  std::string cpu = fills(FlamePalette::kCpu), off = fills(FlamePalette::kOffCpu),
              locks = fills(FlamePalette::kLocks);
  EXPECT_NE(cpu, off);
  EXPECT_NE(off, locks);
  EXPECT_NE(cpu, locks);
}

// Labels are cut for 7.3 px a character (Chromium draws 12 px monospace at
// about 7.2), counted in characters, never in the middle of one.
TEST(FlameGraphTest, LabelsFitTheirFrames) {
  FoldedStacks folded;
  std::string name = "\xc3\xa9" + std::string(200, 'x');  // e-acute, then ASCII
  folded.add({name}, 1);
  std::ostringstream out;
  writeFlameGraphSvg(folded, {.width = 420}, out);  // a 400 px frame
  std::string svg = out.str();
  size_t at = svg.find("data-d=\"1\"");
  ASSERT_NE(at, std::string::npos);
  size_t text = svg.find("<text", at);
  size_t start = svg.find('>', text) + 1;
  std::string label = svg.substr(start, svg.find("</text>", start) - start);
  // (400 - 6) / 7.3 = 53 characters: 51 of the name and "..".
  EXPECT_EQ(label, "\xc3\xa9" + std::string(50, 'x') + "..");
}

// Names from a trace can hold anything: the output stays well-formed XML
// (no control characters, valid UTF-8, markup escaped) and shows them.
TEST(FlameGraphTest, HostileNamesStayWellFormed) {
  EXPECT_EQ(escapeXml("\x1b]0;PWNED\x07"), "\\x1b]0;PWNED\\x07");
  EXPECT_EQ(escapeXml("a\tb\nc\x7f"), "a\\x09b\\x0ac\\x7f");
  EXPECT_EQ(escapeXml("bad \xff\xfe end"), "bad \\xff\\xfe end");
  EXPECT_EQ(escapeXml("cut \xe2\x82"), "cut \\xe2\\x82");
  EXPECT_EQ(escapeXml("overlong \xc0\xaf"), "overlong \\xc0\\xaf");
  EXPECT_EQ(escapeXml("surrogate \xed\xa0\x80"), "surrogate \\xed\\xa0\\x80");
  EXPECT_EQ(escapeXml("nonchar \xef\xbf\xbe \xef\xbf\xbf"), "nonchar \\u{fffe} \\u{ffff}");
  EXPECT_EQ(escapeXml("c1 \xc2\x9b"), "c1 \\u{009b}");
  EXPECT_EQ(escapeXml("ok \xe2\x82\xac \xf0\x9f\x94\xa5 \xef\xbf\xbd"),
            "ok \xe2\x82\xac \xf0\x9f\x94\xa5 \xef\xbf\xbd");
  EXPECT_EQ(escapeXml("<a&'\">"), "&lt;a&amp;&#39;&quot;&gt;");
}

TEST(FlameGraphTest, NarrowFramesAreLeftOut) {
  FoldedStacks folded;
  folded.add({"big"}, 1'000'000);
  folded.add({"tiny"}, 1);
  std::ostringstream out;
  writeFlameGraphSvg(folded, {.min_width_px = 0.5}, out);
  EXPECT_NE(out.str().find("data-n=\"big\""), std::string::npos);
  EXPECT_EQ(out.str().find("data-n=\"tiny\""), std::string::npos);
}

TEST(FlameGraphTest, EscapesAllXmlSpecials) {
  EXPECT_EQ(escapeXml("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
}

}  // namespace
}  // namespace incise::analyzer
