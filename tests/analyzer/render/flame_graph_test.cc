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
  EXPECT_EQ(svg.find("<script"), std::string::npos);
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
