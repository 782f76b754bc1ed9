/**
 * How many sandboxed runs per second? Runs a trivial Python program (`print(1)`) many times and prints runs/s:
 *   - each isolation kind that works here (bwrap, unshare) and 'none' (unisolated: rlimits, empty env, temp cwd)
 *   - sequentially (concurrency 1) and through the pool at concurrency 2
 * Every run is checked (verdict ok, stdout "1\n"); a failed run aborts the bench. A kind whose warm-up run is refused
 * (as root, 'none' refuses a runtime the dropped uid cannot reach, e.g. a pyenv Python under /root) is listed as skipped.
 * Run: npx tsx --conditions=troupe:source bench/sandbox.ts [runs=40] [--json]
 */
import { probeIsolation, Sandbox, type IsolationKind, type RunRequest } from '@troupe/sandbox';

const RUNS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 40);
const JSON_OUT = process.argv.includes('--json');
const REQUEST: RunRequest = { language: 'python', source: 'print(1)' };

interface Row {
  isolation: IsolationKind;
  concurrency: number;
  runs: number;
  seconds: number;
  runsPerSecond: number;
  meanWallMs: number;
}

async function measure(
  isolation: IsolationKind,
  concurrency: number,
): Promise<Row | { isolation: IsolationKind; skipped: string }> {
  const sandbox = new Sandbox({ isolation, concurrency, allowUnisolated: isolation === 'none' });
  try {
    // Warm-up: resolves the interpreter and the isolation probe, which are cached afterwards.
    const warm = await sandbox.run(REQUEST);
    if (warm.verdict === 'refused') return { isolation, skipped: warm.reason ?? 'refused' };
    if (warm.verdict !== 'ok')
      throw new Error(`${isolation}: warm-up run failed: ${warm.verdict} ${warm.reason ?? ''} ${warm.stderr}`);
    const t0 = performance.now();
    const results = await sandbox.runMany(Array.from({ length: RUNS }, () => REQUEST));
    const seconds = (performance.now() - t0) / 1000;
    const bad = results.find((r) => r.verdict !== 'ok' || r.stdout !== '1\n');
    if (bad) throw new Error(`${isolation}: a run failed: ${JSON.stringify(bad)}`);
    const meanWallMs = results.reduce((s, r) => s + r.wallMs, 0) / results.length;
    return {
      isolation,
      concurrency,
      runs: RUNS,
      seconds: +seconds.toFixed(2),
      runsPerSecond: +(RUNS / seconds).toFixed(1),
      meanWallMs: +meanWallMs.toFixed(1),
    };
  } finally {
    await sandbox.close();
  }
}

const report = await probeIsolation();
const kinds: IsolationKind[] = [...(['bwrap', 'unshare'] as const).filter((k) => report.available[k]), 'none'];
const rows: Row[] = [];
const skipped = new Map<IsolationKind, string>();
for (const kind of kinds) {
  for (const concurrency of [1, 2]) {
    const r = await measure(kind, concurrency);
    if ('skipped' in r) skipped.set(kind, r.skipped);
    else rows.push(r);
  }
}

if (JSON_OUT) {
  process.stdout.write(
    `${JSON.stringify({ program: 'print(1)', isolation: report, rows, skipped: Object.fromEntries(skipped) }, null, 2)}\n`,
  );
} else {
  console.log(`sandboxed runs of print(1), ${RUNS} per row (${report.details})`);
  console.log('isolation  concurrency  runs/s  mean wall ms');
  for (const r of rows)
    console.log(
      `${r.isolation.padEnd(10)} ${String(r.concurrency).padStart(11)}  ${String(r.runsPerSecond).padStart(6)}  ${String(r.meanWallMs).padStart(12)}`,
    );
  for (const [kind, why] of skipped) console.log(`${kind.padEnd(10)} skipped: ${why}`);
}
