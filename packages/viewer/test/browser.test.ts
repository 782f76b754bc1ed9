/**
 * The viewer in a real headless browser (Debian's chromium through playwright-core) against the fixture run: the
 * numbers on the page are the trace's and the metrics', the filters and the sort work, the tree marks the selected and
 * greedy branches, compare pairs the two evaluation traces, the page follows a run that is still writing, and the
 * exported file opens from file://.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { exportRun, startViewer, type AppAssets, type RunningViewer } from '../src/index.js';
import { freshAssets, launchBrowser, pageErrors, waitForCount, waitForText } from './helpers/browser.js';
import { FIXTURE_RUN, fixtureMetrics, fixtureRecords, rawGroups, rawOutcomes } from './helpers/fixture.js';

const fmt = (x: number, d: number) => x.toFixed(d);
const signed = (x: number, d: number) => `${x >= 0 ? '+' : ''}${x.toFixed(d)}`;

describe('troupe view in chromium (fixture run)', function () {
  this.timeout(60_000);
  let browser: Browser;
  let assets: AppAssets;
  let cleanup = () => {};
  let viewer: RunningViewer;
  let page: Page;
  let errors: string[];
  const records = fixtureRecords();
  const groups = rawGroups(records);

  before(async () => {
    ({ assets, cleanup } = await freshAssets());
    browser = await launchBrowser();
    viewer = await startViewer(FIXTURE_RUN, { port: 0, assets });
  });
  after(async () => {
    await viewer?.close();
    await browser?.close();
    cleanup();
  });
  beforeEach(async () => {
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    errors = pageErrors(page);
  });
  afterEach(async () => {
    await page.close();
    assert.deepEqual(errors, [], 'the page logged errors');
  });

  const texts = (selector: string) => page.locator(selector).allInnerTexts();

  it('shows the run: its name, the final evaluation against the start of RL, checkpoints and the metric plots', async () => {
    await page.goto(viewer.url);
    await page.locator('[data-testid=run-name]').waitFor();
    assert.equal(await page.locator('[data-testid=run-name]').innerText(), 'viewer-fixture');
    const final = fixtureMetrics().find((m) => m.kind === 'final')!;
    const paired = await page.locator('[data-testid=paired]').innerText();
    assert.match(paired, new RegExp(`\\+${final['compare/gained']} gained.*−${final['compare/lost']} lost`));
    assert.deepEqual(await texts('[data-testid=checkpoints] tbody td:first-child'), [
      'checkpoints/step-0',
      'checkpoints/step-2',
      'checkpoints/step-3',
    ]);
    await page.locator('.plot[data-chart=success] svg').waitFor();
    assert.equal(await page.locator('.plot svg').count(), 5, 'success, reward, loss, zero variance, time');
    // integer step axis: the x axis labels the training steps, whole steps only
    const ticks = await page
      .locator('.plot[data-chart=success] svg .role-axis-label')
      .first()
      .locator('text')
      .allTextContents();
    assert.deepEqual(
      ticks,
      fixtureMetrics()
        .filter((m) => m.kind === 'train')
        .map((m) => String(m.step)),
    );
    assert.match(await page.locator('[data-testid=spec]').innerText(), /name: viewer-fixture/);
  });

  it("shows each step's success as metrics.jsonl records it, and a group's rewards, advantages and selected branch", async () => {
    await page.goto(`${viewer.url}#/steps?trace=trace.jsonl&step=2`);
    await page.locator('[data-testid=groups] tbody tr').first().waitFor();
    for (const m of fixtureMetrics().filter((x) => x.kind === 'train')) {
      assert.equal(
        await page.locator(`[data-testid=steps] tr[data-step="${m.step}"] td[data-col=success]`).innerText(),
        fmt(m['rollout/success_rate'] as number, 3),
        `step ${m.step}`,
      );
    }
    const id = groups.findIndex((g) => g[0]!.step === 2 && g[0]!.turn === 1);
    const g = groups[id]!;
    const row = page.locator(`[data-testid=groups] tr[data-group="${id}"]`);
    assert.deepEqual(
      await row.locator('td[data-col=rewards] .bv').allInnerTexts(),
      g.map((r) => fmt(r.reward, 2)),
    );
    assert.deepEqual(
      await row.locator('td[data-col=advantages] .bv').allInnerTexts(),
      g.map((r) => signed(r.advantage!, 2)),
    );
    assert.equal(
      await row.locator('td[data-col=rewards] .bv.sel').innerText(),
      fmt(g.find((r) => r.selected)!.reward, 2),
    );
    assert.equal(
      await page.locator('[data-testid=group-count]').innerText(),
      `${groups.filter((x) => x[0]!.step === 2).length} groups`,
    );
  });

  it('filters groups by seat, turn, malformed completions, failed episodes and zero variance, and sorts them', async () => {
    const outcomes = rawOutcomes(records);
    const count = async () => Number((await page.locator('[data-testid=group-count]').innerText()).split(' ')[0]);
    const waitCount = (n: number) => waitForText(page, '[data-testid=group-count]', `${n} groups`);
    await page.goto(`${viewer.url}#/steps?trace=trace.jsonl`);
    await waitCount(groups.length);
    await page.selectOption('select[data-filter=seat]', 'executor');
    await waitCount(groups.filter((g) => g[0]!.seat === 'executor').length);
    assert.deepEqual([...new Set(await texts('[data-testid=groups] tbody td:nth-child(4)'))], ['executor']);
    await page.selectOption('select[data-filter=turn]', '1');
    await waitCount(groups.filter((g) => g[0]!.seat === 'executor' && g[0]!.turn === 1).length);
    await page.goto(`${viewer.url}#/steps?trace=trace.jsonl`);
    await page.selectOption('select[data-filter=malformed]', 'true');
    const malformed = groups.filter((g) => g.some((r) => r.parseError !== null));
    assert.ok(malformed.length > 0, 'the fixture has malformed completions');
    await waitCount(malformed.length);
    await page.selectOption('select[data-filter=malformed]', '');
    await page.selectOption('select[data-filter=failed]', 'true');
    await waitCount(groups.filter((g) => outcomes.get(`${g[0]!.step}|${g[0]!.episodeId}`) === false).length);
    await page.selectOption('select[data-filter=failed]', '');
    await page.selectOption('select[data-filter=zeroVariance]', 'false');
    await waitCount(groups.filter((g) => !g.every((r) => r.reward === g[0]!.reward)).length);
    assert.ok((await count()) > 0);
    // sort by spread, largest first
    await page.click('th[data-sort=spread]');
    await page.waitForURL(/sort=spread/);
    const spreads = groups.map((g) => Math.max(...g.map((r) => r.reward)) - Math.min(...g.map((r) => r.reward)));
    await waitForText(page, '[data-testid=groups] tbody tr td:nth-child(7)', fmt(Math.max(...spreads), 2));
  });

  it('draws the tree of an instance: turns down, seats across, K branches with rewards, advantages, selected and greedy branches', async () => {
    const first = records.find((r) => r.step === 3)!;
    const episode = records.filter((r) => r.step === 3 && r.episodeId === first.episodeId);
    await page.goto(`${viewer.url}#/tree?trace=trace.jsonl&id=${encodeURIComponent(first.episodeId)}&step=3`);
    await page.locator('.tree .group').first().waitFor();
    assert.deepEqual(await texts('.tree .seat-head'), [...new Set(episode.map((r) => r.seat))]);
    for (const g of rawGroups(episode)) {
      const cell = page.locator(`.group[data-turn="${g[0]!.turn}"][data-seat="${g[0]!.seat}"]`);
      assert.deepEqual(
        await cell.locator('[data-field=reward]').allInnerTexts(),
        g.map((r) => fmt(r.reward, 3)),
      );
      assert.deepEqual(
        await cell.locator('[data-field=advantage]').allInnerTexts(),
        g.map((r) => signed(r.advantage!, 3)),
      );
      assert.equal(
        await cell.locator('.branch.selected').getAttribute('data-branch'),
        String(g.find((r) => r.selected)!.branch),
      );
      const greedy = g.find((r) => r.greedy);
      if (greedy) assert.equal(await cell.locator('.branch.greedy').getAttribute('data-branch'), String(greedy.branch));
      assert.deepEqual(
        await cell.locator('.completion').allInnerTexts(),
        g.map((r) => r.completion),
      );
      // the team term's weight is the seat's α in the spec as run (viewer-run.yaml: the executor's is 0.5), the others weigh 1
      const alpha = g[0]!.seat === 'executor' ? '0.50' : '1.00';
      assert.deepEqual(
        await cell.locator('.branch').first().locator('td.weight').allInnerTexts(),
        Object.keys(g[0]!.terms).map((t) => (t === 'team' ? `α ${alpha}` : '× 1.00')),
      );
    }
    assert.ok(
      episode.some((r) => r.greedy),
      'the fixture marks greedy branches',
    );
    // what the next seat was shown: the next group's last user message
    const next = page.locator('.group[data-turn="0"]').first().locator('details.next');
    await next.locator('summary').click();
    const groupsInOrder = rawGroups(episode);
    assert.equal(
      await next.locator('pre').innerText(),
      groupsInOrder[1]![0]!.prompt.filter((m) => m.role !== 'system').at(-1)!.content,
    );
  });

  it('pairs two evaluation traces by instance: gained, lost and where the paths part', async () => {
    const a = rawOutcomes(fixtureRecords('evals/step-0.trace.jsonl'));
    const b = rawOutcomes(fixtureRecords('evals/step-3-sampled.trace.jsonl'));
    const uid = (k: string) => k.split('|')[1]!;
    const bByUid = new Map([...b].map(([k, v]) => [uid(k), v]));
    const gained = [...a].filter(([k, v]) => !v && bByUid.get(uid(k)) === true).length;
    const lost = [...a].filter(([k, v]) => v && bByUid.get(uid(k)) === false).length;
    await page.goto(`${viewer.url}#/compare?a=evals/step-0.trace.jsonl&b=evals/step-3-sampled.trace.jsonl`);
    await page.locator('[data-testid=compare-summary]').waitFor();
    assert.equal(await page.locator('[data-testid=gained]').innerText(), `+${gained} gained`);
    assert.equal(await page.locator('[data-testid=lost]').innerText(), `−${lost} lost`);
    assert.equal(await page.locator('[data-testid=pairs] tr.pair').count(), a.size);
    await page.selectOption('select[data-filter=status]', 'gained');
    await waitForCount(page, '[data-testid=pairs] tr.pair', gained);
    if (gained > 0) {
      await page.locator('[data-testid=pairs] tr.pair').first().click();
      await page.locator('.side-by-side ol.path li').first().waitFor();
      assert.equal(await page.locator('.side-by-side > div').count(), 2);
    }
  });

  it('shows credit diagnostics per seat and turn', async () => {
    await page.goto(`${viewer.url}#/credit?trace=trace.jsonl`);
    await page.locator('[data-testid=credit] tbody tr').first().waitFor();
    for (const seat of ['proposer', 'executor']) {
      const cell = groups.filter((g) => g[0]!.seat === seat && g[0]!.turn === 0);
      const adv = cell.flat().map((r) => Math.abs(r.advantage!));
      const row = page.locator(`[data-testid=credit] tr[data-seat="${seat}"][data-turn="0"]`);
      assert.equal(
        await row.locator('td[data-col=adv]').innerText(),
        fmt(adv.reduce((x, y) => x + y, 0) / adv.length, 3),
      );
      const zero = cell.filter((g) => g.every((r) => r.reward === g[0]!.reward)).length / cell.length;
      assert.equal(await row.locator('td[data-col=zero]').innerText(), `${(100 * zero).toFixed(1)}%`);
    }
    await page.locator('.plot[data-chart=credit-heatmap] svg').waitFor();
  });

  it('follows a run that is still writing its trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-view-live-'));
    writeFileSync(join(dir, 'trace.jsonl'), '');
    const live = await startViewer(dir, { port: 0, assets });
    try {
      const lines = readFileSync(join(FIXTURE_RUN, 'trace.jsonl'), 'utf8').split('\n').filter(Boolean);
      const step1 = lines.filter((l) => (JSON.parse(l) as { step: number }).step === 1);
      appendFileSync(join(dir, 'trace.jsonl'), `${step1.join('\n')}\n`);
      await page.goto(`${live.url}#/steps?trace=trace.jsonl`);
      await page.locator('[data-testid=steps] tr[data-step="1"]').waitFor();
      assert.equal(await page.locator('[data-testid=steps] tr[data-step="2"]').count(), 0);
      const step2 = lines.filter((l) => (JSON.parse(l) as { step: number }).step === 2);
      appendFileSync(join(dir, 'trace.jsonl'), `${step2.join('\n')}\n`);
      await page.locator('[data-testid=steps] tr[data-step="2"]').waitFor({ timeout: 15_000 });
      await waitForText(
        page,
        '[data-testid=group-count]',
        `${groups.filter((g) => g[0]!.step! <= 2).length} groups`,
        15_000,
      );
    } finally {
      await live.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exports one self-contained page that opens from file:// with the same numbers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-view-export-'));
    try {
      const file = join(dir, 'run.html');
      const out = await exportRun(FIXTURE_RUN, file, { assets });
      assert.equal(out.omittedEpisodes, 0);
      const requests: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) requests.push(r.url());
      });
      await page.goto(`${pathToFileURL(file).href}#/steps?trace=trace.jsonl&step=2`);
      await page.locator('[data-testid=groups] tbody tr').first().waitFor();
      const m = fixtureMetrics().find((x) => x.kind === 'train' && x.step === 2)!;
      assert.equal(
        await page.locator('[data-testid=steps] tr[data-step="2"] td[data-col=success]').innerText(),
        fmt(m['rollout/success_rate'] as number, 3),
      );
      await page.locator('[data-testid=groups] tbody tr a').first().click();
      await page.locator('.tree .branch.selected').first().waitFor();
      assert.match(await page.locator('header').innerText(), /snapshot/);
      assert.deepEqual(requests, [], 'the export loads nothing from the network');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
