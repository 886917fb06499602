#include "analyzer/render/flame_graph.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "analyzer/render/flame_graph_script.h"
#include "analyzer/render/table.h"
#include "analyzer/render/terminal_text.h"

namespace incise::analyzer {
namespace {

constexpr int kSidePad = 10;
constexpr int kTitleY = 20;     // 16 px title
constexpr int kControlsY = 38;  // subtitle, "Reset Zoom", "Search"
constexpr int kTopPad = 48;
constexpr int kBottomPad = 26;  // the details and search-status line
// Width of a 12 px monospace glyph for labels cut before the script runs:
// Chromium draws DejaVu Sans Mono and Liberation Mono 12 px at 7.2 px, so 7.3
// keeps a cut label inside its frame (the script refits to the measured width).
constexpr double kCharWidth = 7.3;
constexpr double kTitleCharWidth = 16 * 0.61;
constexpr double kControlsWidth = 100;  // room left for each corner control

struct Node {
  std::string name;
  uint64_t value = 0;
  uint64_t offset = 0;  // weight units from the left edge
  int depth = 0;
  size_t parent = 0;
  std::map<std::string, size_t> children;
};

std::vector<Node> buildTree(const FoldedStacks& folded) {
  std::vector<Node> nodes(1);
  nodes[0].name = "all";
  nodes[0].value = folded.total();
  for (const auto& [path, weight] : folded.paths()) {
    size_t current = 0;
    for (const auto& frame : FoldedStacks::split(path)) {
      auto found = nodes[current].children.find(frame);
      size_t child;
      if (found == nodes[current].children.end()) {
        child = nodes.size();
        nodes[current].children.emplace(frame, child);
        Node node;
        node.name = frame;
        node.depth = nodes[current].depth + 1;
        node.parent = current;
        nodes.push_back(std::move(node));
      } else {
        child = found->second;
      }
      nodes[child].value += weight;
      current = child;
    }
  }
  // Children sit left to right in name order, as in flamegraph.pl.
  std::vector<size_t> pending = {0};
  while (!pending.empty()) {
    size_t parent = pending.back();
    pending.pop_back();
    uint64_t x = nodes[parent].offset;
    for (const auto& [name, child] : nodes[parent].children) {
      nodes[child].offset = x;
      x += nodes[child].value;
      pending.push_back(child);
    }
  }
  return nodes;
}

// A colour from the name in the palette's range, stable across runs (FNV-1a).
std::string colourOf(const std::string& name, FlamePalette palette) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : name) hash = (hash ^ c) * 16777619u;
  double v1 = static_cast<double>(hash & 0xff) / 255.0;
  double v2 = static_cast<double>((hash >> 8) & 0xff) / 255.0;
  double v3 = static_cast<double>((hash >> 16) & 0xff) / 255.0;
  int red = 0, green = 0, blue = 0;
  switch (palette) {
    case FlamePalette::kCpu:  // flamegraph.pl "hot"
      red = 205 + static_cast<int>(50 * v3);
      green = static_cast<int>(230 * v1);
      blue = static_cast<int>(55 * v2);
      break;
    case FlamePalette::kOffCpu:  // flamegraph.pl "io"
      red = 80 + static_cast<int>(60 * v1);
      green = red;
      blue = 190 + static_cast<int>(55 * v2);
      break;
    case FlamePalette::kLocks:  // flamegraph.pl "purple"
      red = 190 + static_cast<int>(65 * v1);
      green = 80 + static_cast<int>(60 * v1);
      blue = red;
      break;
  }
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "rgb(%d,%d,%d)", red, green, blue);
  return buffer;
}

// The name as it is shown: terminalText (control characters, bidi controls
// and bytes that are not UTF-8 as \xNN or \u{NNNN}, the same text a report
// prints), and the two code points XML 1.0 forbids that it keeps, U+FFFE
// and U+FFFF, as \u{fffe} and \u{ffff}. Markup characters are left for
// escapeMarkup.
std::string displayText(const std::string& text) {
  std::string shown = terminalText(text);
  for (size_t at = shown.find("\xef\xbf"); at != std::string::npos;
       at = shown.find("\xef\xbf", at + 1)) {
    if (at + 2 < shown.size() && (shown[at + 2] == '\xbe' || shown[at + 2] == '\xbf'))
      shown.replace(at, 3, shown[at + 2] == '\xbe' ? "\\u{fffe}" : "\\u{ffff}");
  }
  return shown;
}

std::string escapeMarkup(const std::string& text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&#39;";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

// Code points of valid UTF-8 text (displayText's output).
size_t codePoints(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}

// The first `count` code points of valid UTF-8 text.
std::string firstCodePoints(const std::string& text, size_t count) {
  size_t i = 0;
  for (size_t seen = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80 && seen++ == count) break;
  }
  return text.substr(0, i);
}

// The last `count` code points of valid UTF-8 text.
std::string lastCodePoints(const std::string& text, size_t count) {
  size_t i = text.size();
  for (size_t seen = 0; i > 0 && seen < count;) {
    --i;
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) ++seen;
  }
  return text.substr(i);
}

// A frame label cut to `width_px` (shown text in, shown text out), as the script cuts it.
std::string fitLabel(const std::string& shown, double width_px) {
  size_t fits = width_px > 6 ? static_cast<size_t>((width_px - 6) / kCharWidth) : 0;
  if (fits < 3) return "";
  if (codePoints(shown) <= fits) return shown;
  return firstCodePoints(shown, fits - 2) + "..";
}

// A title cut in the middle to `width_px`, keeping both ends (a path's start
// and its file name).
std::string fitTitle(const std::string& shown, double width_px, double char_px) {
  size_t fits = static_cast<size_t>(std::max(0.0, width_px / char_px));
  size_t length = codePoints(shown);
  if (length <= fits) return shown;
  if (fits < 5) return firstCodePoints(shown, fits);
  size_t head = (fits - 1) / 2, tail = fits - 1 - head;
  return firstCodePoints(shown, head) + "\xe2\x80\xa6" + lastCodePoints(shown, tail);
}

// The root-first path of a node, joined by ';' (the FoldedStacks key).
std::string pathOf(const std::vector<Node>& nodes, size_t index) {
  std::vector<const std::string*> frames;
  for (; index != 0; index = nodes[index].parent) frames.push_back(&nodes[index].name);
  std::string path;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (!path.empty()) path += ';';
    path += **it;
  }
  return path;
}

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

std::string percentText(uint64_t part, uint64_t whole) {
  return number(whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0) + "%";
}

std::string amountText(uint64_t value, const FlameGraphOptions& options) {
  if (options.weights == FlameWeights::kNanoseconds) return formatDurationNs(value);
  return std::to_string(value) + ' ' + options.unit;
}

// The frame's static tooltip (the <title>), as the script describes it.
std::string tooltip(const std::string& shown_name, uint64_t value, uint64_t total,
                    const std::pair<uint64_t, uint64_t>* sides, const FlameGraphOptions& options) {
  if (!sides)
    return shown_name + " (" + amountText(value, options) + ", " + percentText(value, total) + ")";
  const FlameComparison& c = *options.comparison;
  double before = c.base_total ? static_cast<double>(sides->first) / c.base_total : 0;
  double after = c.new_total ? static_cast<double>(sides->second) / c.new_total : 0;
  char change[32];
  std::snprintf(change, sizeof change, "%+.2f pp", 100 * (after - before));
  return shown_name + " (" + c.base_label + ' ' + percentText(sides->first, c.base_total) + " -> " +
         c.new_label + ' ' + percentText(sides->second, c.new_total) + ", " + change + ")";
}

void writeSvg(const FoldedStacks& folded, const FlameGraphOptions& options, bool standalone,
              std::ostream& out) {
  std::vector<Node> nodes = buildTree(folded);
  uint64_t total = std::max<uint64_t>(folded.total(), 1);
  double plot_width = options.width - 2 * kSidePad;
  int max_depth = 0;
  for (const auto& node : nodes) max_depth = std::max(max_depth, node.depth);
  int height = kTopPad + (max_depth + 1) * options.frame_height + kBottomPad;
  const FlameComparison* comparison = options.comparison ? &*options.comparison : nullptr;
  std::string unit = options.weights == FlameWeights::kNanoseconds ? "ns" : options.unit;

  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"flame\" width=\"" << options.width
      << "\" height=\"" << height << "\" viewBox=\"0 0 " << options.width << ' ' << height
      << "\" data-total=\"" << folded.total() << "\" data-unit=\"" << escapeXml(unit)
      << "\" data-pad=\"" << kSidePad << "\"";
  if (comparison) {
    out << " data-base-total=\"" << comparison->base_total << "\" data-new-total=\""
        << comparison->new_total << "\" data-base-label=\"" << escapeXml(comparison->base_label)
        << "\" data-new-label=\"" << escapeXml(comparison->new_label) << "\"";
  }
  out << ">\n"
      << "<style>text{font-family:monospace;font-size:12px;fill:#000}"
         ".f rect{stroke:#fff;stroke-width:0.5}.f:hover rect{stroke:#000}"
         ".f text{pointer-events:none}.hidden{display:none}.dim rect{opacity:0.5}"
         "#title{font-size:16px}.control{cursor:pointer;fill:#333}.control:hover{fill:#00c}"
         "</style>\n"
      << "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#fdfaf0\"/>\n"
      << "<text id=\"title\" x=\"" << options.width / 2 << "\" y=\"" << kTitleY
      << "\" text-anchor=\"middle\">"
      << escapeMarkup(
             fitTitle(displayText(options.title), options.width - 2 * kSidePad, kTitleCharWidth))
      << "</text>\n";
  if (!options.subtitle.empty()) {
    out << "<text id=\"subtitle\" x=\"" << options.width / 2 << "\" y=\"" << kControlsY
        << "\" text-anchor=\"middle\">"
        << escapeMarkup(fitTitle(displayText(options.subtitle),
                                 options.width - 2 * kSidePad - 2 * kControlsWidth, kCharWidth))
        << "</text>\n";
  }
  if (standalone) {
    out << "<text id=\"unzoom\" class=\"control hidden\" x=\"" << kSidePad << "\" y=\""
        << kControlsY << "\">Reset Zoom</text>\n"
        << "<text id=\"search-button\" class=\"control\" x=\"" << options.width - kSidePad
        << "\" y=\"" << kControlsY << "\" text-anchor=\"end\">Search</text>\n"
        << "<text id=\"details\" x=\"" << kSidePad << "\" y=\"" << height - 8 << "\"> </text>\n";
  }
  out << "<text id=\"status\" x=\"" << options.width - kSidePad << "\" y=\"" << height - 8
      << "\" text-anchor=\"end\"></text>\n";

  for (size_t index = 0; index < nodes.size(); ++index) {
    const Node& node = nodes[index];
    double w = plot_width * static_cast<double>(node.value) / static_cast<double>(total);
    if (w < options.min_width_px && node.depth != 0) continue;
    double x =
        kSidePad + plot_width * static_cast<double>(node.offset) / static_cast<double>(total);
    int y = height - kBottomPad - (node.depth + 1) * options.frame_height;
    std::string shown = displayText(node.name);
    std::string path = node.depth == 0 ? std::string() : pathOf(nodes, index);
    std::pair<uint64_t, uint64_t> sides;
    if (comparison) {
      sides = node.depth == 0 ? std::pair{comparison->base_total, comparison->new_total}
                              : comparison->weights(path);
    }
    std::string tip = tooltip(shown, node.value, total, comparison ? &sides : nullptr, options);
    FrameStyle style;
    if (options.style && node.depth != 0) style = options.style(path);
    if (style.fill.empty()) {
      style.fill =
          node.depth == 0 ? std::string("rgb(230,230,230)") : colourOf(node.name, options.palette);
    }
    if (!style.note.empty()) tip += "; " + displayText(style.note);
    out << "<g class=\"f\" data-n=\"" << escapeMarkup(shown) << "\" data-o=\"" << node.offset
        << "\" data-v=\"" << node.value << "\" data-d=\"" << node.depth << "\"";
    if (comparison) out << " data-b=\"" << sides.first << "\" data-a=\"" << sides.second << "\"";
    if (!style.note.empty()) out << " data-note=\"" << escapeXml(style.note) << "\"";
    out << "><title>" << escapeMarkup(tip) << "</title>"
        << "<rect x=\"" << number(x) << "\" y=\"" << y << "\" width=\"" << number(w)
        << "\" height=\"" << options.frame_height - 1 << "\" fill=\"" << escapeXml(style.fill)
        << "\"/>"
        << "<text x=\"" << number(x + 3) << "\" y=\"" << y + options.frame_height - 4 << "\">"
        << escapeMarkup(fitLabel(shown, w)) << "</text></g>\n";
  }
  if (standalone) {
    // CDATA keeps the script's '<' and '&' out of the XML parser's way.
    out << "<script type=\"text/ecmascript\"><![CDATA[" << kFlameGraphScript << "]]></script>\n";
  }
  out << "</svg>\n";
}

}  // namespace

std::string escapeXml(const std::string& text) {
  return escapeMarkup(displayText(text));
}

void writeFlameGraphSvg(const FoldedStacks& folded, const FlameGraphOptions& options,
                        std::ostream& out) {
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  writeSvg(folded, options, /*standalone=*/true, out);
}

void writeFlameGraphHtml(const FoldedStacks& folded, const FlameGraphOptions& options,
                         std::ostream& out) {
  std::string totals;
  if (const auto& c = options.comparison) {
    totals = c->base_label + ' ' + amountText(c->base_total, options) + ", " + c->new_label + ' ' +
             amountText(c->new_total, options);
  } else {
    totals = "total " + amountText(folded.total(), options);
  }
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      << escapeXml(options.title) << "</title>\n"
      << "<style>body{margin:8px;font-family:sans-serif;background:#fdfaf0}"
         "#bar{margin-bottom:6px}#tip{position:absolute;display:none;background:#ffffe0;"
         "border:1px solid #888;padding:3px 6px;font:12px monospace;pointer-events:none;"
         "max-width:90vw;overflow-wrap:anywhere}"
         "</style>\n</head>\n<body>\n"
      << "<div id=\"bar\"><button id=\"reset\">reset zoom</button> "
         "<input id=\"search\" placeholder=\"search (regex)\" size=\"40\"> "
         "<small>click a frame to zoom; Ctrl-F searches; "
      << escapeXml(totals) << "</small></div>\n";
  writeSvg(folded, options, /*standalone=*/false, out);
  out << "<div id=\"tip\"></div>\n<script>" << kFlameGraphScript << "</script>\n</body>\n</html>\n";
}

}  // namespace incise::analyzer
