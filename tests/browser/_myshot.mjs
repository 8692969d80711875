import { serveDist, launch, openApp } from './harness.js';
const [hash, out, focus] = process.argv.slice(2);
const server = await serveDist('');
const browser = await launch();
const { page } = await openApp(browser, server.origin, hash, { viewport: { width: 1280, height: 720 } });
if (focus) { await page.getByRole('button', { name: new RegExp(focus) }).focus(); }
await page.waitForTimeout(300);
await page.screenshot({ path: out });
await browser.close(); await server.close();
