/**
 * What does instance N cost in a fresh process? A worker of a distributed run is told "play instance N of split S"
 * and builds the environment from scratch, so `environment.instance(split, N, seed)` must not cost more as N grows.
 * For every environment with generated or shipped instances (default configs) and N in {0, 1000, 20000, 100000},
 * runs ONE fresh process that builds the environment and calls `instance(split, N, 1)` once, and prints a JSON line:
 * the environment, split, N, the seconds of that call (`instance_s`; construction apart, `construct_s`), the peak RSS
 * of the process (`peak_rss_mb`) and the heap used after the call (`heap_mb`). A point that runs past the timeout
 * prints `"timeout": true`. With `walk` > 0, also times, per environment in a fresh process, the trainer's walk over
 * the first `walk` distinct instances of the split (`distinctIndices`: what a resumed run's schedule rebuilds once):
 * `walk_s`, the last index visited (`last_index`: the repeats it skipped) and whether the split was used up.
 * Run: npx tsx --conditions=troupe:source bench/instances.ts [split=train] [timeout_s=300] [envs=plan-path,sokoban,sudoku,math,code] [ns=0,1000,20000,100000] [walk=0]
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Environment, Split } from '@troupe/kernel';

const MB = 1 << 20;

/** The environments, each built with its default config. */
const MAKERS: Record<string, () => Promise<Environment>> = {
  'plan-path': async () => new (await import('@troupe/env-plan-path')).PlanPathEnvironment({}),
  sokoban: async () => new (await import('@troupe/env-sokoban')).SokobanEnvironment({}),
  sudoku: async () => new (await import('@troupe/env-sudoku')).SudokuEnvironment({}),
  math: async () => new (await import('@troupe/env-math')).MathEnvironment({}),
  code: async () => new (await import('@troupe/env-code')).CodeEnvironment({}),
};

if (process.argv[2] === '--point') {
  // One point: nothing but the construction and the one call.
  const [name, split, n] = [process.argv[3]!, process.argv[4] as Split, Number(process.argv[5])];
  const t0 = performance.now();
  const env = await MAKERS[name]!();
  const t1 = performance.now();
  const instance = env.instance(split, n, 1);
  const t2 = performance.now();
  process.stdout.write(
    JSON.stringify({
      construct_s: +((t1 - t0) / 1000).toFixed(3),
      instance_s: +((t2 - t1) / 1000).toFixed(3),
      peak_rss_mb: Math.round((process.resourceUsage().maxRSS * 1024) / MB),
      heap_mb: Math.round(process.memoryUsage().heapUsed / MB),
      key: env.instanceKey(instance).slice(0, 12),
    }),
  );
} else if (process.argv[2] === '--walk') {
  // One walk: the first N distinct instances, from index 0.
  const [name, split, n] = [process.argv[3]!, process.argv[4] as Split, Number(process.argv[5])];
  const env = await MAKERS[name]!();
  const { DistinctIndices, instanceKeyAt } = await import('@troupe/trainer');
  const t0 = performance.now();
  const walk = new DistinctIndices(instanceKeyAt(env, split, 1));
  let last = -1;
  for (let i = 0; i < n; i++) last = walk.take();
  process.stdout.write(
    JSON.stringify({
      walk_s: +((performance.now() - t0) / 1000).toFixed(2),
      last_index: last,
      used_up: walk.exhausted,
      peak_rss_mb: Math.round((process.resourceUsage().maxRSS * 1024) / MB),
    }),
  );
} else {
  const split = (process.argv[2] ?? 'train') as Split;
  const timeoutS = Number(process.argv[3] ?? 300);
  const names = (process.argv[4] ?? Object.keys(MAKERS).join(',')).split(',');
  const ns = (process.argv[5] ?? '0,1000,20000,100000').split(',').map(Number);
  const walkN = Number(process.argv[6] ?? 0);
  const self = fileURLToPath(import.meta.url);
  const run = (args: string[], point: object): void => {
    try {
      const out = execFileSync(process.execPath, ['--conditions=troupe:source', '--import', 'tsx', self, ...args], {
        encoding: 'utf8',
        timeout: timeoutS * 1000,
        maxBuffer: 1 << 20,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      console.log(JSON.stringify({ ...point, ...(JSON.parse(out) as object) }));
    } catch (err) {
      const e = err as { signal?: string; stderr?: string };
      if (e.signal === 'SIGTERM') console.log(JSON.stringify({ ...point, timeout: true, timeout_s: timeoutS }));
      else
        console.log(
          JSON.stringify({ ...point, error: (e.stderr ?? String(err)).trim().split('\n').slice(-3).join(' | ') }),
        );
    }
  };
  for (const name of names) {
    if (!MAKERS[name])
      throw new Error(`bench/instances.ts: unknown environment "${name}" (known: ${Object.keys(MAKERS).join(', ')})`);
    for (const n of ns) run(['--point', name, split, String(n)], { env: name, split, n });
    if (walkN > 0) run(['--walk', name, split, String(walkN)], { env: name, split, walk: walkN });
  }
}
