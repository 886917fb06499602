// Drives an incise latency heat map in headless Chromium (puppeteer-core and
// Debian's chromium): counts maps and calls, hovers a cell, drags across
// columns to zoom, resets, filters by name. Prints key=value lines for
// tests/analyzer/render/heat_map_browser_test.cc.
//   node heat_map_check.js FILE.html SEARCH_TERM
const puppeteer = require('puppeteer-core');

(async () => {
  const [file, term] = [process.argv[2], process.argv[3]];
  const out = {};
  const errors = [];
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu'], defaultViewport: { width: 1400, height: 900 } });
  const page = await browser.newPage();
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', e => errors.push(String(e)));
  await page.goto('file://' + file, { waitUntil: 'load' });
  out.maps = await page.$$eval('svg.heat', s => s.length);
  out.calls = await page.$$eval('svg.heat', s => s.map(svg =>
      Array.from(svg.querySelectorAll('rect.c')).reduce((n, r) => n + +r.dataset.n, 0)).join(','));
  // Hover the first map's first cell.
  const cell = await page.$('svg.heat rect.c');
  const box = await cell.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  out.tooltip_display = await page.$eval('#tip', e => getComputedStyle(e).display);
  out.tooltip = await page.$eval('#tip', e => e.textContent);
  // Drag across the first map's left half: zoom.
  const svg = await page.$('svg.heat');
  const s = await svg.boundingBox();
  const before = await page.$eval('svg.heat', e => e.getAttribute('viewBox'));
  await page.mouse.move(s.x + 80, s.y + s.height / 2);
  await page.mouse.down();
  await page.mouse.move(s.x + 80 + (s.width - 80) / 2, s.y + s.height / 2, { steps: 5 });
  await page.mouse.up();
  out.zoomed = await page.$eval('svg.heat', e => e.dataset.zoom || '');
  out.viewbox_changed = (await page.$eval('svg.heat', e => e.getAttribute('viewBox'))) !== before ? 1 : 0;
  await page.click('#reset');
  out.reset = (await page.$eval('svg.heat', e => e.getAttribute('viewBox'))) === before ? 1 : 0;
  await page.type('#search', term);
  out.shown = await page.$$eval('div.map', ds => ds.filter(d => d.style.display !== 'none').length);
  out.errors = errors.length;
  for (const [k, v] of Object.entries(out)) console.log(k + '=' + v);
  errors.forEach(e => console.log('error_text=' + e));
  await browser.close();
})().catch(e => { console.error('FATAL', e); process.exit(1); });
