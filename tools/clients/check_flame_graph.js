// Opens an incise flame graph (.html, or a standalone .svg) in headless
// Chromium and reports, as JSON on stdout, what a user would see:
//   - whether it parsed (an .svg is parsed as XML: one bad byte and Chromium
//     shows a parser error instead of the graph), console and page errors;
//   - labels that overrun their frame, at load and after zooming;
//   - clicking the widest frame below the root zooms it to the full width;
//   - each SEARCH regex's status line ("matched N frames, 12.50%", or for a
//     differential graph "... base X%, new Y%"), through the page's own
//     search box or, in an .svg, its "Search" button and prompt.
// usage: node check_flame_graph.js FILE [SEARCH...]
//   example: node check_flame_graph.js /tmp/app.html '^parse$'
const path = require('path');
const { launch, collectMessages, sleep } = require('./browser');

async function overflowing(page) {
  return page.evaluate(() => {
    const out = [];
    for (const g of document.querySelectorAll('g.f')) {
      if (g.classList.contains('hidden')) continue;
      const r = g.querySelector('rect'), t = g.querySelector('text');
      if (!t || !t.textContent) continue;
      const end = +t.getAttribute('x') + t.getComputedTextLength();
      const limit = +r.getAttribute('x') + +r.getAttribute('width');
      if (end > limit + 0.01) out.push({ name: g.dataset.n, label: t.textContent, over_px: end - limit });
    }
    return out;
  });
}

async function main() {
  const [file, ...searches] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node check_flame_graph.js FILE [SEARCH...]');
    process.exit(2);
  }
  const result = { file, searches: [] };
  const browser = await launch();
  try {
    const page = await browser.newPage();
    result.messages = collectMessages(page);
    let answer = '';
    page.on('dialog', async d => { await d.accept(answer); });
    page.setDefaultTimeout(180000);  // a loaded machine takes its time
    await page.goto('file://' + path.resolve(file), { waitUntil: 'load', timeout: 180000 });
    await sleep(200);
    result.parsed = await page.evaluate(() =>
      !document.querySelector('parsererror') && !!document.getElementById('flame'));
    if (!result.parsed) {
      result.parser_error = await page.evaluate(() => document.documentElement.textContent.slice(0, 500));
      return;
    }
    result.frames = await page.$$eval('g.f', gs => gs.length);
    result.labels = await page.$$eval('g.f text', ts => ts.filter(t => t.textContent).length);
    result.overflow_at_load = await overflowing(page);

    // Zoom into the widest frame below the root.
    result.zoom = await page.evaluate(() => {
      const svg = document.getElementById('flame');
      const pad = +svg.dataset.pad, plot = svg.viewBox.baseVal.width - 2 * pad;
      const frames = Array.from(document.querySelectorAll('g.f')).filter(g => +g.dataset.d >= 1);
      if (!frames.length) return null;
      frames.sort((a, b) => (+b.dataset.v - +a.dataset.v) || (+b.dataset.d - +a.dataset.d));
      const target = frames.find(g => +g.dataset.v < +svg.dataset.total) || frames[0];
      target.dispatchEvent(new MouseEvent('click', { bubbles: true }));
      const width = +target.querySelector('rect').getAttribute('width');
      return { name: target.dataset.n, width, plot, full_width: Math.abs(width - plot) < 0.01 };
    });
    result.overflow_zoomed = await overflowing(page);
    await page.evaluate(() => window.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' })));

    for (const term of searches) {
      const isHtml = await page.evaluate(() => !!document.getElementById('search') &&
                                               document.getElementById('search').tagName === 'INPUT');
      if (isHtml) {
        await page.evaluate(t => {
          const input = document.getElementById('search');
          input.value = t;
          input.dispatchEvent(new Event('input'));
        }, term);
      } else {
        answer = term;
        await page.click('#search-button');
        await sleep(100);
      }
      const status = await page.$eval('#status', e => e.textContent);
      result.searches.push({ term, status });
      if (!isHtml) await page.click('#search-button');  // "Reset Search"
    }
  } finally {
    await browser.close();
    console.log(JSON.stringify(result, null, 1));
  }
}

main().catch(e => { console.error('check_flame_graph:', e); process.exit(1); });
