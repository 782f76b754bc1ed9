/**
 * Takes the screenshots of docs/viewer.md: each view of the fixture run in headless chromium.
 * Usage (repository root): node --conditions=troupe:source --import tsx packages/viewer/scripts/screenshots.ts
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startViewer } from '../src/index.js';
import { freshAssets, launchBrowser } from '../test/helpers/browser.js';
import { FIXTURE_RUN, fixtureRecords } from '../test/helpers/fixture.js';

const OUT = fileURLToPath(new URL('../../../docs/images/', import.meta.url));

const { assets, cleanup } = await freshAssets();
const viewer = await startViewer(FIXTURE_RUN, { port: 0, assets });
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  const shot = async (name: string, hash: string, ready: string, height = 900) => {
    await page.setViewportSize({ width: 1440, height });
    await page.goto(`${viewer.url}${hash}`);
    await page.locator(ready).first().waitFor();
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(OUT, `viewer-${name}.png`) });
    console.log(join(OUT, `viewer-${name}.png`));
  };
  const episode =
    fixtureRecords().find((r) => r.step === 3 && r.success) ?? fixtureRecords().find((r) => r.step === 3)!;
  await shot('overview', '#/overview', '.plot[data-chart=time] svg', 1250);
  await shot('steps', '#/steps?trace=trace.jsonl&step=3', '[data-testid=groups] tbody tr', 1000);
  await shot(
    'tree',
    `#/tree?trace=trace.jsonl&id=${encodeURIComponent(episode.episodeId)}&step=3`,
    '.tree .group',
    1100,
  );
  // with the first group's prompt and what the next seat was shown opened
  await page.locator('.group').first().locator('details.prompt summary').click();
  await page.locator('.group').first().locator('details.next summary').click();
  await page.screenshot({ path: join(OUT, 'viewer-tree.png'), fullPage: true });
  await shot(
    'compare',
    '#/compare?a=evals/step-0.trace.jsonl&b=evals/step-3-sampled.trace.jsonl',
    '[data-testid=pairs] tbody tr',
    700,
  );
  await page.locator('[data-testid=pairs] tr.pair.gained').first().click();
  await page.locator('.side-by-side ol.path li').first().waitFor();
  await page.screenshot({ path: join(OUT, 'viewer-compare.png') });
  await shot('credit', '#/credit?trace=trace.jsonl', '.plot[data-chart=credit-heatmap] svg', 620);
} finally {
  await browser.close();
  await viewer.close();
  cleanup();
}
