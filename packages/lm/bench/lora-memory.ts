/**
 * Memory of an L2 team (two roles, one LoRA adapter each) on one checkpoint: the resident memory of a generation step
 * where both roles sample, with the base held ONCE (`CausalLM.shareBase`, both roles' rows in one batch) against one
 * copy of the base per role (what every L2 policy loaded before), each in a fresh process so that nothing else counts.
 *
 * Each process loads the checkpoint, attaches the adapters (rank `--r` on q/k/v/o), frees what loading left behind
 * (`gc()`), then runs the generation step: `--prompts` prompts per role of `--prompt-len` tokens, `--n` samples each,
 * `--tokens` new tokens. Its RSS is sampled before the step, at every token and after; `step_peak_rss_mb` is the
 * highest. `expected_mb` is what the step must hold: the base once (or twice), both adapters, both roles' KV caches,
 * plus the process's RSS before loading (Node, tfjs). Prints one JSON line per mode and a summary line.
 *
 * Run (one at a time on a shared machine; the Qwen3-0.6B shape needs ~3 GB shared, ~6 GB as copies):
 *   npx tsx --conditions=troupe:source packages/lm/bench/lora-memory.ts --model DIR [--backend cpu] [--modes shared,copies]
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CausalLM, SharedBaseBatcher, generateBatch, initBackend, loadCheckpoint, type BackendName } from '@troupe/lm';

const MB = 2 ** 20;
const { values: args } = parseArgs({
  options: {
    model: { type: 'string' },
    backend: { type: 'string', default: 'cpu' },
    modes: { type: 'string', default: 'shared,copies' },
    prompts: { type: 'string', default: '2' },
    n: { type: 'string', default: '2' },
    'prompt-len': { type: 'string', default: '16' },
    tokens: { type: 'string', default: '8' },
    r: { type: 'string', default: '8' },
    child: { type: 'string' },
  },
});
const rss = (): number => process.memoryUsage().rss;
const gc = (globalThis as { gc?: () => void }).gc;

/** One mode in this (fresh) process: load, attach adapters, one generation step of both roles; RSS throughout. */
async function child(mode: 'shared' | 'copies'): Promise<Record<string, unknown>> {
  const rssStart = rss();
  const report = await initBackend({ backend: args.backend as BackendName });
  const rssBackend = rss();
  const load = (): Promise<CausalLM> => loadCheckpoint(args.model!);
  const lora = {
    r: Number(args.r),
    alpha: 2 * Number(args.r),
    targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'],
  };
  let roles: CausalLM[];
  const owned: CausalLM[] = [];
  if (mode === 'shared') {
    const root = await load();
    owned.push(root);
    roles = [root.shareBase(), root.shareBase()];
  } else roles = [await load(), await load()];
  owned.push(...roles);
  roles.forEach((m, i) => m.addLora(lora, i + 1));
  gc?.();
  const rssLoaded = rss();
  const P = Number(args['prompt-len']),
    prompts = Number(args.prompts),
    n = Number(args.n),
    N = Number(args.tokens);
  const V = roles[0]!.config.vocabSize;
  const item = (role: number, k: number) => ({
    promptIds: Array.from({ length: P }, (_, j) => (7919 * (role * 31 + k * 7 + j + 1)) % V),
    options: { maxNewTokens: N, n, seed: 100 * role + k, temperature: 1, eosTokenIds: [] as number[] },
  });
  let peak = rss();
  const onToken = (): void => {
    peak = Math.max(peak, rss());
  };
  const t0 = performance.now();
  if (mode === 'shared') {
    const batcher = new SharedBaseBatcher(owned[0]!);
    await Promise.all(
      roles.map((m, r) =>
        batcher.generate(
          m,
          Array.from({ length: prompts }, (_, k) => item(r, k)),
          { onToken },
        ),
      ),
    );
  } else
    for (const [r, m] of roles.entries())
      await generateBatch(
        m,
        Array.from({ length: prompts }, (_, k) => item(r, k)),
        { onToken },
      );
  const stepS = (performance.now() - t0) / 1000;
  peak = Math.max(peak, rss());
  const c = roles[0]!.config;
  // both roles' KV caches at their full length (the shared step holds both at once; the copies one after the other)
  const kvBytes = 2 * c.numLayers * 2 * prompts * n * c.numKvHeads * (P + N) * c.headDim * 4;
  const baseBytes = roles[0]!.baseBytes() * (mode === 'shared' ? 1 : 2);
  const adapterBytes = roles.reduce((s, m) => s + m.adapterBytes(), 0);
  const expected = baseBytes + adapterBytes + kvBytes + rssBackend;
  const params = roles[0]!.numParams();
  for (const m of owned) m.dispose();
  return {
    mode,
    backend: report.backend,
    params,
    rows_per_role: prompts * n,
    new_tokens: N,
    base_mb: +(baseBytes / MB).toFixed(1),
    adapters_mb: +(adapterBytes / MB).toFixed(2),
    kv_mb: +(kvBytes / MB).toFixed(1),
    rss_before_load_mb: +(rssBackend / MB).toFixed(0),
    rss_start_mb: +(rssStart / MB).toFixed(0),
    rss_loaded_mb: +(rssLoaded / MB).toFixed(0),
    step_peak_rss_mb: +(peak / MB).toFixed(0),
    expected_mb: +(expected / MB).toFixed(0),
    step_peak_over_expected: +(peak / expected).toFixed(3),
    lifetime_peak_rss_mb: +(process.resourceUsage().maxRSS / 1024).toFixed(0),
    step_s: +stepS.toFixed(2),
  };
}

if (args.child) {
  process.stdout.write(JSON.stringify(await child(args.child as 'shared' | 'copies')));
} else {
  if (!args.model) throw new Error('lora-memory: give --model DIR (a Hugging Face-layout checkpoint folder)');
  const self = fileURLToPath(import.meta.url);
  const results: Record<string, Record<string, unknown>> = {};
  for (const mode of args.modes.split(',')) {
    const pass = Object.entries(args).flatMap(([k, v]) =>
      k === 'child' || k === 'modes' ? [] : [`--${k}`, String(v)],
    );
    try {
      const out = execFileSync(
        process.execPath,
        ['--expose-gc', '--conditions=troupe:source', '--import', 'tsx', self, ...pass, '--child', mode],
        { maxBuffer: 1 << 20, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
      );
      results[mode] = JSON.parse(out.slice(out.indexOf('{'))) as Record<string, unknown>;
    } catch (err) {
      results[mode] = { mode, error: (err as Error).message.split('\n').slice(0, 3).join(' ') };
    }
    console.log(JSON.stringify(results[mode]));
  }
  const s = results.shared,
    c = results.copies;
  if (s && c && typeof s.step_peak_rss_mb === 'number' && typeof c.step_peak_rss_mb === 'number')
    console.log(
      JSON.stringify({
        summary: 'one shared base vs a base per role',
        shared_step_peak_rss_mb: s.step_peak_rss_mb,
        copies_step_peak_rss_mb: c.step_peak_rss_mb,
        saved_mb: c.step_peak_rss_mb - s.step_peak_rss_mb,
        shared_over_expected: s.step_peak_over_expected,
      }),
    );
}
