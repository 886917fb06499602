// Loads files into speedscope's own app (the npm package's build, served
// from 127.0.0.1) in headless Chromium, as a user opening them would, and
// reports as JSON on stdout, per file: the app's import warnings and errors
// (the console: a Chrome trace whose slices overlap shows one warning per
// misnested slice) and the text of the page once loaded (the toolbar names
// the profile it opened on).
// usage: node check_speedscope.js FILE...
//   example: node check_speedscope.js /tmp/app.json /tmp/app.speedscope.json
const fs = require('fs');
const http = require('http');
const path = require('path');
const { launch, collectMessages, sleep } = require('./browser');

const app = path.join(__dirname, 'node_modules', 'speedscope', 'dist', 'release');
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
                '.json': 'application/json', '.wasm': 'application/wasm' };

function serve(files) {
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url.split('?')[0]);
    let file = null;
    if (url.startsWith('/files/')) file = files[+url.slice('/files/'.length)];
    else file = path.join(app, path.normalize(url === '/' ? '/index.html' : url));
    if (!file || (!url.startsWith('/files/') && !file.startsWith(app)) || !fs.existsSync(file)) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const files = process.argv.slice(2).map(f => path.resolve(f));
  if (!files.length) {
    console.error('usage: node check_speedscope.js FILE...');
    process.exit(2);
  }
  const server = await serve(files);
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await launch();
  const results = [];
  try {
    for (let i = 0; i < files.length; ++i) {
      const page = await browser.newPage();
      const messages = collectMessages(page);
      const url = `${base}/index.html#profileURL=${encodeURIComponent(`${base}/files/${i}`)}` +
                  `&title=${encodeURIComponent(path.basename(files[i]))}`;
      // Generous limits: a loaded machine (a CI box building) takes its time.
      page.setDefaultTimeout(180000);
      await page.goto(url, { waitUntil: 'networkidle0', timeout: 180000 });
      let text = '';
      for (let waited = 0; waited < 120000; waited += 250) {
        await sleep(250);
        text = await page.evaluate(() => document.body.innerText);
        if (!/Loading/i.test(text) && text.trim().length > 0) break;
      }
      results.push({ file: files[i], warnings: messages.warnings, errors: messages.errors,
                     text: text.slice(0, 2000) });
      await page.close();
    }
  } finally {
    await browser.close();
    server.close();
    console.log(JSON.stringify(results, null, 1));
  }
}

main().catch(e => { console.error('check_speedscope:', e); process.exit(1); });
