#include "analyzer/render/flame_graph.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace incise::analyzer {
namespace {

constexpr int kTopPad = 48;  // title and search status
constexpr int kBottomPad = 8;
constexpr int kSidePad = 10;
constexpr double kCharWidth = 7.0;  // px of a 12px monospace-ish glyph

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

// A warm colour from the name, stable across runs (FNV-1a).
std::string colourOf(const std::string& name) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : name) hash = (hash ^ c) * 16777619u;
  int red = 205 + static_cast<int>(hash % 50);
  int green = static_cast<int>((hash >> 8) % 230);
  int blue = static_cast<int>((hash >> 16) % 55);
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "rgb(%d,%d,%d)", red, green, blue);
  return buffer;
}

std::string fitText(const std::string& name, double width_px) {
  size_t fits = width_px > 6 ? static_cast<size_t>((width_px - 6) / kCharWidth) : 0;
  if (fits < 3) return "";
  if (name.size() <= fits) return name;
  return name.substr(0, fits - 2) + "..";
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

void writeSvg(const FoldedStacks& folded, const FlameGraphOptions& options, std::ostream& out) {
  std::vector<Node> nodes = buildTree(folded);
  uint64_t total = std::max<uint64_t>(folded.total(), 1);
  double plot_width = options.width - 2 * kSidePad;
  int max_depth = 0;
  for (const auto& node : nodes) max_depth = std::max(max_depth, node.depth);
  int height = kTopPad + (max_depth + 1) * options.frame_height + kBottomPad;

  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"flame\" width=\"" << options.width
      << "\" height=\"" << height << "\" viewBox=\"0 0 " << options.width << ' ' << height
      << "\" data-total=\"" << folded.total() << "\" data-unit=\"" << escapeXml(options.unit)
      << "\" data-frame-height=\"" << options.frame_height << "\" data-pad=\"" << kSidePad
      << "\">\n"
      << "<style>text{font-family:monospace;font-size:12px;fill:#000}"
         ".f rect{stroke:#fff;stroke-width:0.5}.f:hover rect{stroke:#000}"
         ".f text{pointer-events:none}.hidden{display:none}.dim rect{opacity:0.5}"
         "#title{font-size:16px}</style>\n"
      << "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#fdfaf0\"/>\n"
      << "<text id=\"title\" x=\"" << options.width / 2 << "\" y=\"22\" text-anchor=\"middle\">"
      << escapeXml(options.title) << "</text>\n"
      << "<text id=\"status\" x=\"" << kSidePad << "\" y=\"40\"></text>\n";

  for (size_t index = 0; index < nodes.size(); ++index) {
    const Node& node = nodes[index];
    double w = plot_width * static_cast<double>(node.value) / static_cast<double>(total);
    if (w < options.min_width_px && node.depth != 0) continue;
    double x =
        kSidePad + plot_width * static_cast<double>(node.offset) / static_cast<double>(total);
    int y = height - kBottomPad - (node.depth + 1) * options.frame_height;
    std::string name = escapeXml(node.name);
    std::string tip = name + " (" + std::to_string(node.value) + ' ' + escapeXml(options.unit) +
                      ", " + number(100.0 * static_cast<double>(node.value) / total) + "%)";
    FrameStyle style;
    if (options.style && node.depth != 0) style = options.style(pathOf(nodes, index));
    if (style.fill.empty()) {
      style.fill = node.depth == 0 ? std::string("rgb(230,230,230)") : colourOf(node.name);
    }
    if (!style.note.empty()) tip += "; " + escapeXml(style.note);
    out << "<g class=\"f\" data-n=\"" << name << "\" data-o=\"" << node.offset << "\" data-v=\""
        << node.value << "\" data-d=\"" << node.depth << "\"";
    if (!style.note.empty()) out << " data-note=\"" << escapeXml(style.note) << "\"";
    out << "><title>" << tip << "</title>"
        << "<rect x=\"" << number(x) << "\" y=\"" << y << "\" width=\"" << number(w)
        << "\" height=\"" << options.frame_height - 1 << "\" fill=\"" << escapeXml(style.fill)
        << "\"/>"
        << "<text x=\"" << number(x + 3) << "\" y=\"" << y + options.frame_height - 4 << "\">"
        << escapeXml(fitText(node.name, w)) << "</text></g>\n";
  }
  out << "</svg>\n";
}

// Zoom, search and tooltip. Geometry is recomputed from data-o/data-v, so
// the server-side layout and the script agree by construction.
constexpr const char* kScript = R"JS(
(function () {
  var svg = document.getElementById('flame');
  var total = +svg.dataset.total, unit = svg.dataset.unit, pad = +svg.dataset.pad;
  var plot = svg.viewBox.baseVal.width - 2 * pad;
  var frames = Array.prototype.slice.call(svg.querySelectorAll('g.f'));
  var tip = document.getElementById('tip'), status = document.getElementById('status');
  var zoomed = null;
  function pct(v, of) { return (100 * v / of).toFixed(2) + '%'; }
  function fit(name, w) {
    var n = Math.floor((w - 6) / 7);
    if (n < 3) return '';
    return name.length <= n ? name : name.slice(0, n - 2) + '..';
  }
  function layout(base) {
    var o0 = base ? +base.dataset.o : 0, v0 = base ? +base.dataset.v : total;
    var d0 = base ? +base.dataset.d : 0;
    frames.forEach(function (g) {
      var o = +g.dataset.o, v = +g.dataset.v, d = +g.dataset.d;
      var inside = o >= o0 && o + v <= o0 + v0 && d >= d0;
      var below = d < d0 && o <= o0 && o + v >= o0 + v0;
      g.classList.toggle('hidden', !inside && !below);
      g.classList.toggle('dim', below);
      if (!inside && !below) return;
      var x = below ? 0 : (o - o0) / v0 * plot, w = below ? plot : v / v0 * plot;
      var r = g.querySelector('rect'), t = g.querySelector('text');
      r.setAttribute('x', pad + x); r.setAttribute('width', w);
      t.setAttribute('x', pad + x + 3); t.textContent = fit(g.dataset.n, w);
    });
    zoomed = base;
  }
  frames.forEach(function (g) {
    g.addEventListener('click', function () { layout(+g.dataset.d === 0 ? null : g); });
    g.addEventListener('mousemove', function (e) {
      tip.style.display = 'block';
      tip.style.left = (e.pageX + 12) + 'px'; tip.style.top = (e.pageY + 12) + 'px';
      tip.textContent = g.dataset.n + ' \u2014 ' + g.dataset.v + ' ' + unit + ', ' +
          pct(+g.dataset.v, total) + ' of all' +
          (zoomed ? ', ' + pct(+g.dataset.v, +zoomed.dataset.v) + ' of zoomed' : '') +
          (g.dataset.note ? '; ' + g.dataset.note : '');
    });
    g.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  });
  document.getElementById('reset').addEventListener('click', function () { layout(null); });
  document.getElementById('search').addEventListener('input', function (e) {
    var term = e.target.value, matched = [], re = null;
    try { re = term ? new RegExp(term) : null; } catch (err) { re = null; }
    frames.forEach(function (g) {
      var hit = !!term && +g.dataset.d > 0 &&
          (re ? re.test(g.dataset.n) : g.dataset.n.indexOf(term) >= 0);
      g.querySelector('rect').style.fill = hit ? 'rgb(230,0,230)' : '';
      if (hit) matched.push(g);
    });
    // Share covered by matches, each sample counted once (nested matches skipped).
    matched.sort(function (a, b) { return a.dataset.o - b.dataset.o || a.dataset.d - b.dataset.d; });
    var covered = 0, end = -1;
    matched.forEach(function (g) {
      var o = +g.dataset.o, v = +g.dataset.v;
      if (o >= end) { covered += v; end = o + v; }
    });
    status.textContent = term ? 'matched ' + matched.length + ' frames, ' + pct(covered, total) : '';
  });
})();
)JS";

}  // namespace

void writeFlameGraphSvg(const FoldedStacks& folded, const FlameGraphOptions& options,
                        std::ostream& out) {
  out << "<?xml version=\"1.0\" standalone=\"no\"?>\n";
  writeSvg(folded, options, out);
}

void writeFlameGraphHtml(const FoldedStacks& folded, const FlameGraphOptions& options,
                         std::ostream& out) {
  writeHtmlPageStart(out, options.title, "");
  out << "<div id=\"bar\"><button id=\"reset\">reset zoom</button> "
         "<input id=\"search\" placeholder=\"search (regex)\" size=\"40\"> "
         "<small>click a frame to zoom; total "
      << folded.total() << ' ' << escapeXml(options.unit) << "</small></div>\n";
  writeSvg(folded, options, out);
  writeHtmlPageEnd(out, kScript);
}

}  // namespace incise::analyzer
