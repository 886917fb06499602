// Shared by the client checks: headless Chromium through puppeteer-core.
// The browser is Debian's chromium (CHROMIUM overrides its path); puppeteer
// itself would download one, and the tests must not need the network.
const puppeteer = require('puppeteer-core');

function chromiumPath() {
  return process.env.CHROMIUM || '/usr/bin/chromium';
}

async function launch() {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    timeout: 180000,
    args: ['--no-sandbox', '--disable-gpu', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
           '--window-size=1400,900'],
    defaultViewport: { width: 1400, height: 900 },
  });
}

// The software renderer's own performance notes, not the page's.
const rendererNoise = /GL Driver Message|\[\.WebGL-/;

// Console messages and page errors of `page`, by kind.
function collectMessages(page) {
  const messages = { errors: [], warnings: [], logs: [] };
  page.on('console', m => {
    if (rendererNoise.test(m.text())) return;
    const kind = m.type() === 'error' ? 'errors' : m.type() === 'warn' || m.type() === 'warning' ? 'warnings' : 'logs';
    messages[kind].push(m.text().slice(0, 300));
  });
  page.on('pageerror', e => messages.errors.push(String(e).slice(0, 300)));
  return messages;
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

module.exports = { launch, collectMessages, sleep };
