#include "analyzer/render/heat_map.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analyzer/render/html_page.h"

namespace incise::analyzer {
namespace {

constexpr int kCellWidth = 8;
constexpr int kCellHeight = 14;
constexpr int kLeft = 70;  // bucket labels
constexpr int kTop = 6;
constexpr int kBottom = 22;  // time labels

// "512ns", "1.05ms", "2.15s": a bucket's lower bound.
std::string bucketLabel(size_t bucket) {
  uint64_t ns = bucket == 0 ? 0 : uint64_t{1} << bucket;
  char text[32];
  if (ns >= 1'000'000'000)
    std::snprintf(text, sizeof text, "%.3gs", static_cast<double>(ns) / 1e9);
  else if (ns >= 1'000'000)
    std::snprintf(text, sizeof text, "%.3gms", static_cast<double>(ns) / 1e6);
  else if (ns >= 1'000)
    std::snprintf(text, sizeof text, "%.3gus", static_cast<double>(ns) / 1e3);
  else
    std::snprintf(text, sizeof text, "%lluns", static_cast<unsigned long long>(ns));
  return text;
}

// White-yellow-red by log(count) / log(most).
std::string colour(uint64_t count, uint64_t most) {
  double t =
      most <= 1 ? 1.0 : std::log(static_cast<double>(count)) / std::log(static_cast<double>(most));
  t = std::clamp(t, 0.0, 1.0);
  int r = static_cast<int>(255 - 55 * t);
  int g = static_cast<int>(235 - 215 * t);
  int b = static_cast<int>(150 - 140 * t);
  char text[24];
  std::snprintf(text, sizeof text, "rgb(%d,%d,%d)", r, g, b);
  return text;
}

void writeMap(const HeatMap& map, size_t index, std::ostream& out) {
  size_t columns = map.cells.size();
  size_t buckets = 0;
  uint64_t most = 0, total = 0;
  for (const auto& column : map.cells) {
    buckets = std::max(buckets, column.size());
    for (uint64_t n : column) {
      most = std::max(most, n);
      total += n;
    }
  }
  int width = kLeft + static_cast<int>(columns) * kCellWidth + 10;
  int height = kTop + static_cast<int>(buckets) * kCellHeight + kBottom;
  out << "<div class=\"map\" data-name=\"" << escapeXml(map.name) << "\">\n<h3>"
      << escapeXml(map.name) << " <small>" << escapeXml(map.summary) << "</small></h3>\n"
      << "<svg class=\"heat\" id=\"map" << index << "\" width=\"" << width << "\" height=\""
      << height << "\" viewBox=\"0 0 " << width << ' ' << height << "\" data-left=\"" << kLeft
      << "\" data-cw=\"" << kCellWidth << "\" data-columns=\"" << columns << "\" data-start=\""
      << map.start_ns << "\" data-colns=\"" << map.column_ns << "\" data-total=\"" << total
      << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (size_t b = 0; b < buckets; ++b) {
    int y = kTop + static_cast<int>(buckets - 1 - b) * kCellHeight;
    out << "<text class=\"yl\" x=\"" << kLeft - 4 << "\" y=\"" << y + kCellHeight - 3 << "\">"
        << bucketLabel(map.first_bucket + b) << "</text>\n";
  }
  for (size_t c = 0; c < columns; ++c) {
    for (size_t b = 0; b < map.cells[c].size(); ++b) {
      uint64_t n = map.cells[c][b];
      if (n == 0) continue;
      int x = kLeft + static_cast<int>(c) * kCellWidth;
      int y = kTop + static_cast<int>(buckets - 1 - b) * kCellHeight;
      out << "<rect class=\"c\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << kCellWidth
          << "\" height=\"" << kCellHeight << "\" fill=\"" << colour(n, most) << "\" data-t=\"" << c
          << "\" data-b=\"" << map.first_bucket + b << "\" data-n=\"" << n << "\"/>\n";
    }
  }
  int axis = kTop + static_cast<int>(buckets) * kCellHeight;
  out << "<line x1=\"" << kLeft << "\" y1=\"" << axis << "\" x2=\"" << width - 10 << "\" y2=\""
      << axis << "\" stroke=\"#888\"/>\n"
      << "<text class=\"xl\" x=\"" << kLeft << "\" y=\"" << axis + 15 << "\"></text>"
      << "<text class=\"xr\" x=\"" << width - 10 << "\" y=\"" << axis + 15
      << "\" text-anchor=\"end\"></text>\n"
      << "<rect class=\"sel\" x=\"0\" y=\"" << kTop << "\" width=\"0\" height=\""
      << buckets * kCellHeight << "\"/>\n</svg>\n</div>\n";
}

// Tooltip, drag-to-zoom over columns (the viewBox narrows; cells keep their
// data), reset, and the name filter. Times and latencies are recomputed from
// data-t / data-b and the map's column width, so the page and the file agree.
constexpr const char* kScript = R"JS(
(function () {
  var tip = document.getElementById('tip');
  function dur(ns) {
    if (ns >= 1e9) return (ns / 1e9).toPrecision(3) + ' s';
    if (ns >= 1e6) return (ns / 1e6).toPrecision(3) + ' ms';
    if (ns >= 1e3) return (ns / 1e3).toPrecision(3) + ' us';
    return ns + ' ns';
  }
  var maps = Array.prototype.slice.call(document.querySelectorAll('svg.heat'));
  maps.forEach(function (svg) {
    var left = +svg.dataset.left, cw = +svg.dataset.cw, columns = +svg.dataset.columns;
    var start = +svg.dataset.start, colns = +svg.dataset.colns;
    var full = svg.getAttribute('viewBox'), h = +svg.getAttribute('height');
    var sel = svg.querySelector('rect.sel'), from = null;
    function labels(c0, c1) {
      svg.querySelector('text.xl').textContent = dur(start + c0 * colns);
      svg.querySelector('text.xr').textContent = dur(start + c1 * colns);
    }
    labels(0, columns);
    function columnAt(e) {
      var box = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
      var x = vb.x + (e.clientX - box.left) / box.width * vb.width;
      return Math.max(0, Math.min(columns - 1, Math.floor((x - left) / cw)));
    }
    svg.querySelectorAll('rect.c').forEach(function (r) {
      r.addEventListener('mousemove', function (e) {
        var t = +r.dataset.t, b = +r.dataset.b;
        tip.style.display = 'block';
        tip.style.left = (e.pageX + 12) + 'px'; tip.style.top = (e.pageY + 12) + 'px';
        tip.textContent = dur(start + t * colns) + ' .. ' + dur(start + (t + 1) * colns) +
            ', latency ' + dur(b === 0 ? 0 : Math.pow(2, b)) + ' .. ' +
            dur(Math.pow(2, b + 1)) + ': ' + r.dataset.n + ' calls';
      });
      r.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
    });
    svg.addEventListener('mousedown', function (e) { from = columnAt(e); e.preventDefault(); });
    svg.addEventListener('mousemove', function (e) {
      if (from === null) return;
      var to = columnAt(e), a = Math.min(from, to), b = Math.max(from, to) + 1;
      sel.setAttribute('x', left + a * cw); sel.setAttribute('width', (b - a) * cw);
    });
    svg.addEventListener('mouseup', function (e) {
      if (from === null) return;
      var to = columnAt(e), a = Math.min(from, to), b = Math.max(from, to) + 1;
      from = null;
      sel.setAttribute('width', 0);
      if (b - a < 2) return;
      svg.setAttribute('viewBox', (left + a * cw - left) + ' 0 ' + (left + (b - a) * cw + 10) +
                       ' ' + h);
      svg.dataset.zoom = a + '-' + b;
      labels(a, b);
    });
    svg.resetZoom = function () {
      svg.setAttribute('viewBox', full); delete svg.dataset.zoom; labels(0, columns);
    };
  });
  document.getElementById('reset').addEventListener('click', function () {
    maps.forEach(function (svg) { svg.resetZoom(); });
  });
  document.getElementById('search').addEventListener('input', function (e) {
    var term = e.target.value, re = null, shown = 0;
    try { re = term ? new RegExp(term) : null; } catch (err) { re = null; }
    document.querySelectorAll('div.map').forEach(function (d) {
      var hit = !term || (re ? re.test(d.dataset.name) : d.dataset.name.indexOf(term) >= 0);
      d.style.display = hit ? '' : 'none';
      if (hit) shown++;
    });
    document.getElementById('status').textContent = term ? shown + ' shown' : '';
  });
})();
)JS";

}  // namespace

void writeHeatMapsHtml(const std::vector<HeatMap>& maps, const std::string& title,
                       std::ostream& out) {
  writeHtmlPageStart(out, title,
                     "svg.heat{background:#fff;user-select:none}rect.c:hover{stroke:#000}"
                     "rect.sel{fill:rgba(0,0,255,0.15)}text{font:11px monospace}"
                     "text.yl{text-anchor:end}h3{margin:12px 0 2px;font-size:14px}");
  out << "<div id=\"bar\"><button id=\"reset\">reset zoom</button> "
         "<input id=\"search\" placeholder=\"function (regex)\" size=\"40\"> <span "
         "id=\"status\"></span> <small>"
      << escapeXml(title)
      << ": time left to right, latency (log2 buckets) bottom to top, colour = calls; "
         "drag to zoom</small></div>\n";
  for (size_t i = 0; i < maps.size(); ++i) writeMap(maps[i], i, out);
  writeHtmlPageEnd(out, kScript);
}

}  // namespace incise::analyzer
