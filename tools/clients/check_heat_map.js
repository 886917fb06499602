// Drives an incise latency heat map in headless Chromium: counts maps and
// calls, hovers a cell, drags across columns to zoom, resets, filters by
// name. Prints key=value lines.
//   node tools/clients/check_heat_map.js FILE.html SEARCH_TERM
const { launch, collectMessages } = require('./browser');

(async () => {
  const [file, term] = [process.argv[2], process.argv[3]];
  const out = {};
  const browser = await launch();
  const page = await browser.newPage();
  const errors = collectMessages(page).errors;
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
