/**
 * `troupe view` on a big run: generates a ~100 MB training trace (~100k records: steps × instances × 2 turns × 2 seats
 * × K = 3 branches, ~1 KB each) and its metrics.jsonl in /tmp, serves it with the CLI, and measures in headless
 * chromium (Debian's, through playwright-core):
 *   first paint   — navigation start to the run overview painted with the run's data (the app's performance mark;
 *                   the trace still indexing in the background); the wall time until the test driver sees it too
 *   steps ready   — the steps → groups view with its first page of groups (the whole trace indexed)
 *   next page     — sort by spread, then the next 100 groups (queries over the index)
 *   tree          — the tree of one instance (its records read back by byte range)
 *   scroll        — 30 wheel steps down the steps → groups page, each to its next frame
 *   server memory — the server's resident set after indexing, and its peak
 * Run (repository root): node --conditions=troupe:source --import tsx bench/view.ts [records=100000] [promptBytes=380]
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { launchBrowser } from '../packages/viewer/test/helpers/browser.js';

const [RECORDS, PROMPT_BYTES] = [100_000, 380].map((d, i) => Number(process.argv[2 + i] ?? d)) as [number, number];
const K = 3,
  SEATS = ['proposer', 'executor'],
  TURNS = 2,
  INSTANCES = 8;
const PER_STEP = INSTANCES * TURNS * SEATS.length * K;
const STEPS = Math.ceil(RECORDS / PER_STEP);

const dir = join(tmpdir(), 'troupe-bench-view');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

/** Writes the trace and metrics.jsonl the trainer would have written. */
async function generate(): Promise<void> {
  const out = createWriteStream(join(dir, 'trace.jsonl'));
  const metrics = createWriteStream(join(dir, 'metrics.jsonl'));
  const grid = '.G..#\n.....\n...##\nA.##.\n#...#\n';
  const filler = grid.repeat(Math.ceil(PROMPT_BYTES / grid.length)).slice(0, PROMPT_BYTES);
  let seed = 1;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let step = 1; step <= STEPS; step++) {
    let solved = 0;
    for (let i = 0; i < INSTANCES; i++) {
      const episodeId = `step-${step}/train/${i}/${(step * 7919 + i).toString(16).padStart(12, '0')}`;
      const success = rand() < Math.min(0.9, step / STEPS);
      if (success) solved++;
      let chunk = '';
      for (let turn = 0; turn < TURNS; turn++) {
        for (const seat of SEATS) {
          const rewards = Array.from({ length: K }, () => (rand() < 0.2 ? 1 : Math.round(rand() * 200 - 100) / 100));
          const mean = rewards.reduce((a, b) => a + b, 0) / K;
          const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (K - 1)) || 0;
          const best = rewards.indexOf(Math.max(...rewards));
          rewards.forEach((reward, branch) => {
            const last = turn === TURNS - 1 && seat === SEATS.at(-1);
            chunk += `${JSON.stringify({
              step,
              episodeId,
              instanceUid: episodeId,
              split: 'train',
              turn,
              seat,
              role: 'planner-v0',
              policy: seat,
              policyVersion: step,
              branch,
              prompt: [
                { role: 'system', content: `${seat}: #### [U,D,L,R]` },
                { role: 'user', content: `A=(3,0) G=(0,1) turn ${turn}\n${filler}` },
              ],
              completion: `#### [U${branch + 1},L${turn + 1}]`,
              action: ['U', 'L'],
              parseError: rand() < 0.05 ? 'expected "#### [U2,R1,...]"' : null,
              terms: { team: seat === 'executor' ? reward : 0, local: reward },
              reward,
              advantage: std === 0 ? 0 : (reward - mean) / (std + 1e-6),
              selected: branch === best,
              ...(branch === 0 ? { greedy: true } : {}),
              done: { terminated: last && success, truncated: last && !success },
              success: last && success && branch === best,
            })}\n`;
          });
        }
      }
      if (!out.write(chunk)) await once(out, 'drain');
    }
    metrics.write(
      `${JSON.stringify({ step, kind: 'train', 'rollout/success_rate': solved / INSTANCES, 'rollout/reward/proposer': rand(), 'rollout/reward/executor': rand(), 'rollout/zero_variance_fraction': rand() * 0.3, 'loss/proposer/loss': rand() / 10, 'loss/executor/loss': rand() / 10, 'time/generate': 1, 'time/env': 0.1, 'time/update': 2, 'time/overhead': 0.1, 'time/step': 3.2 })}\n`,
    );
  }
  out.end();
  metrics.end();
  await Promise.all([once(out, 'finish'), once(metrics, 'finish')]);
}

/** Resident set and its peak (VmHWM) of a process, in MB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

const t0 = performance.now();
await generate();
const size = statSync(join(dir, 'trace.jsonl')).size;
console.log(
  `trace: ${STEPS * PER_STEP} records, ${(size / 1e6).toFixed(1)} MB in ${dir} (generated in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
);

const cli = join(import.meta.dirname, '..', 'packages', 'cli', 'src', 'main.ts');
const server = spawn(
  process.execPath,
  ['--conditions=troupe:source', '--import', 'tsx', cli, 'view', dir, '--port', '0'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const url = await new Promise<string>((resolve, reject) => {
  createInterface({ input: server.stdout! }).once('line', resolve);
  server.once('exit', (code) => reject(new Error(`troupe view exited with ${code}`)));
});
const idle = memory(server.pid!);
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const timed = async (what: string, act: () => Promise<unknown>): Promise<number> => {
    const start = performance.now();
    await act();
    const ms = performance.now() - start;
    console.log(`${what.padEnd(14)} ${ms.toFixed(0).padStart(6)} ms`);
    return ms;
  };
  const firstPaint = await timed('first paint', async () => {
    await page.goto(url);
    await page.locator('[data-testid=run-name]').waitFor();
  });
  const fcp = (await page.evaluate('performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null')) as
    number | null;
  // the app marks its first paint with the run's data (from navigation start, in the page's own clock)
  const firstView = (await page.evaluate('performance.getEntriesByName("troupe:first-view")[0]?.startTime ?? null')) as
    number | null;
  const timing = await page.evaluate(
    `JSON.stringify(performance.getEntriesByType('resource').map((e) => [e.name.replace(/^.*\\//, ''), Math.round(e.startTime), Math.round(e.responseEnd)]))`,
  );
  console.log(`  requests (start, end ms): ${timing}`);
  await timed('steps ready', async () => {
    await page.goto(`${url}#/steps?trace=trace.jsonl`);
    await page.locator('[data-testid=groups] tbody tr').first().waitFor({ timeout: 60_000 });
    await page.waitForFunction(
      `document.querySelectorAll('[data-testid=steps] tbody tr').length === ${STEPS}`,
      undefined,
      { timeout: 60_000 },
    );
  });
  const indexed = memory(server.pid!);
  await timed('next page', async () => {
    await page.click('th[data-sort=spread]');
    await page.waitForURL(/sort=spread/);
    await page.locator('.pager a', { hasText: 'next' }).click();
    await page.waitForURL(/offset=100/);
    await page.locator('.pager .muted', { hasText: '101–200' }).waitFor();
  });
  await timed('tree', async () => {
    await page.locator('[data-testid=groups] tbody tr a').first().click();
    await page.locator('.tree .branch.selected').first().waitFor();
  });
  await page.goto(`${url}#/steps?trace=trace.jsonl`);
  await page.locator('[data-testid=groups] tbody tr').first().waitFor();
  const frames = 30;
  const scroll = await timed('scroll 30×', async () => {
    for (let i = 0; i < frames; i++) {
      await page.mouse.wheel(0, 600);
      await page.evaluate('new Promise((r) => requestAnimationFrame(() => r(null)))');
    }
  });
  console.log(
    `  ${(scroll / frames).toFixed(1)} ms per scroll step (wheel + next frame, through the DevTools protocol)`,
  );
  console.log(
    `in the page: first contentful paint ${fcp === null ? '–' : `${fcp.toFixed(0)} ms`}, the overview painted with the run's data at ${firstView === null ? '–' : `${firstView.toFixed(0)} ms`}`,
  );
  console.log(
    `server memory: ${idle.rss.toFixed(0)} MB at start, ${indexed.rss.toFixed(0)} MB after indexing ${(size / 1e6).toFixed(0)} MB (peak ${memory(server.pid!).peak.toFixed(0)} MB)`,
  );
  const paint = firstView ?? firstPaint;
  console.log(
    paint < 2000
      ? `first paint ${paint.toFixed(0)} ms: under the 2 s target`
      : `first paint ${paint.toFixed(0)} ms: OVER the 2 s target`,
  );
} finally {
  await browser.close();
  server.kill('SIGINT');
  await once(server, 'exit');
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
}
