// The script of every flame graph (flame_graph.h): zoom, search, tooltips and
// label fitting, for an SVG inline in the HTML page or a standalone SVG.
//
// It reads everything from the SVG: the root's data-total, data-unit
// ("ns": durations), data-pad and, for a comparison, data-base-total and
// data-new-total; each frame <g class="f"> has data-n (name), data-o
// (offset), data-v (weight), data-d (depth) and, for a comparison, data-b
// and data-a (the frame's weight in the base and the new profile). So the
// server-side layout and the script agree by construction. Controls are
// found by id: the HTML page's #search input, #reset button and #tip box, or
// the SVG's own #search-button, #unzoom and #details.
//
//   out << "<script>" << kFlameGraphScript << "</script>";
#pragma once

namespace incise::analyzer {

inline constexpr const char* kFlameGraphScript = R"JS(
(function () {
  var svg = document.getElementById('flame');
  var ds = svg.dataset;
  var total = +ds.total, unit = ds.unit, pad = +ds.pad;
  var compare = ds.baseTotal !== undefined;
  var baseTotal = +ds.baseTotal, newTotal = +ds.newTotal;
  var baseLabel = ds.baseLabel, newLabel = ds.newLabel;
  var plot = svg.viewBox.baseVal.width - 2 * pad;
  var frames = Array.prototype.slice.call(svg.querySelectorAll('g.f'));
  var byId = function (id) { return document.getElementById(id); };
  var tip = byId('tip'), details = byId('details'), status = byId('status');
  var input = byId('search'), searchButton = byId('search-button');
  var unzoom = byId('unzoom'), reset = byId('reset');
  var zoomed = null, term = '';

  // The viewer's glyph width for frame labels, measured once.
  var charWidth = (function () {
    var probe = document.createElementNS('http://www.w3.org/2000/svg', 'text');
    probe.setAttribute('class', 'label');
    probe.textContent = 'MMMMMMMMMMMMMMMMMMMM';
    svg.appendChild(probe);
    var w = probe.getComputedTextLength ? probe.getComputedTextLength() / 20 : 0;
    svg.removeChild(probe);
    return w > 0 ? w : 7.3;
  })();
  function fit(name, w) {
    var n = Math.floor((w - 6) / charWidth);
    if (n < 3) return '';
    var chars = Array.from(name);
    return chars.length <= n ? name : chars.slice(0, n - 2).join('') + '..';
  }
  function pct(v, of) { return of > 0 ? (100 * v / of).toFixed(2) + '%' : '0.00%'; }
  function amount(v) {
    if (unit !== 'ns') return v + ' ' + unit;
    if (v < 1e3) return v + ' ns';
    if (v < 1e6) return (v / 1e3).toFixed(3) + ' us';
    if (v < 1e9) return (v / 1e6).toFixed(3) + ' ms';
    return (v / 1e9).toFixed(3) + ' s';
  }
  function describe(g) {
    var d = g.dataset, text = d.n + ' \u2014 ';
    if (compare) {
      var before = baseTotal > 0 ? +d.b / baseTotal : 0, after = newTotal > 0 ? +d.a / newTotal : 0;
      var change = 100 * (after - before);
      text += baseLabel + ' ' + pct(+d.b, baseTotal) + ' \u2192 ' + newLabel + ' ' +
          pct(+d.a, newTotal) + ' (' + (change >= 0 ? '+' : '') + change.toFixed(2) + ' pp)';
      if (zoomed) {
        text += '; of zoomed: ' + baseLabel + ' ' + pct(+d.b, +zoomed.dataset.b) + ', ' +
            newLabel + ' ' + pct(+d.a, +zoomed.dataset.a);
      }
    } else {
      text += amount(+d.v) + ', ' + pct(+d.v, total) + ' of all';
      if (zoomed) text += ', ' + pct(+d.v, +zoomed.dataset.v) + ' of zoomed';
    }
    return text + (d.note ? '; ' + d.note : '');
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
      var x = below || v0 <= 0 ? 0 : (o - o0) / v0 * plot;
      var w = below ? plot : (v0 > 0 ? v / v0 * plot : 0);
      var r = g.querySelector('rect'), t = g.querySelector('text');
      r.setAttribute('x', pad + x); r.setAttribute('width', w);
      t.setAttribute('x', pad + x + 3); t.textContent = fit(g.dataset.n, w);
    });
    zoomed = base;
    if (unzoom) unzoom.classList.toggle('hidden', !base);
  }

  function search(text) {
    term = text || '';
    var matched = [], re = null;
    try { re = term ? new RegExp(term) : null; } catch (err) { re = null; }
    frames.forEach(function (g) {
      var hit = !!term && +g.dataset.d > 0 &&
          (re ? re.test(g.dataset.n) : g.dataset.n.indexOf(term) >= 0);
      g.querySelector('rect').style.fill = hit ? 'rgb(230,0,230)' : '';
      if (hit) matched.push(g);
    });
    // Shares covered by matches, each sample counted once: frames nested in
    // an earlier match (same or smaller span) are skipped.
    matched.sort(function (a, b) { return a.dataset.o - b.dataset.o || a.dataset.d - b.dataset.d; });
    var covered = 0, coveredBase = 0, coveredNew = 0, end = -1;
    matched.forEach(function (g) {
      var o = +g.dataset.o, v = +g.dataset.v;
      if (o < end) return;
      covered += v; end = o + v;
      if (compare) { coveredBase += +g.dataset.b; coveredNew += +g.dataset.a; }
    });
    var text2 = '';
    if (term) {
      text2 = 'matched ' + matched.length + ' frames, ' + (compare
          ? baseLabel + ' ' + pct(coveredBase, baseTotal) + ', ' + newLabel + ' ' +
            pct(coveredNew, newTotal)
          : pct(covered, total));
    }
    status.textContent = text2;
    if (searchButton) searchButton.textContent = term ? 'Reset Search' : 'Search';
  }
  function askSearch() {
    if (input) { input.focus(); return; }
    if (term) { search(''); return; }
    var answer = window.prompt('Search for (regular expression):', '');
    if (answer) search(answer);
  }

  frames.forEach(function (g) {
    g.addEventListener('click', function () { layout(+g.dataset.d === 0 ? null : g); });
    g.addEventListener('mousemove', function (e) {
      var text = describe(g);
      if (details) details.textContent = text;
      if (!tip) return;
      tip.style.display = 'block';
      tip.style.left = (e.pageX + 12) + 'px'; tip.style.top = (e.pageY + 12) + 'px';
      tip.textContent = text;
    });
    g.addEventListener('mouseleave', function () {
      if (tip) tip.style.display = 'none';
      if (details) details.textContent = ' ';
    });
  });
  if (reset) reset.addEventListener('click', function () { layout(null); });
  if (unzoom) unzoom.addEventListener('click', function () { layout(null); });
  if (input) input.addEventListener('input', function (e) { search(e.target.value); });
  if (searchButton) searchButton.addEventListener('click', askSearch);
  window.addEventListener('keydown', function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === 'f' || e.key === 'F3') {
      e.preventDefault();
      askSearch();
    } else if (e.key === 'Escape') {
      layout(null);
    }
  });
  layout(null);
})();
)JS";

}  // namespace incise::analyzer
