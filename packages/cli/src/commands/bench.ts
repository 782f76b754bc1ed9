import type { Command } from 'commander';
import { UsageError, positiveInt, printJson } from '../errors.js';
import { runtimeOption } from '../model-folder.js';
import { importOptional } from '../optional.js';

interface BenchModelCliOptions {
  model?: string;
  preset: string;
  batch: number;
  seq: number;
  steps: number;
  genBatch?: number[];
  genTokens?: number;
  promptLen: number;
  torchThreads: number[];
  trainThreads: number;
  backend?: string;
  runtime: 'tfjs' | 'onnx';
  torch: boolean;
  json?: boolean;
}

/** A comma-separated list of positive integers (`1,8`). */
function positiveIntList(flag: string) {
  const one = positiveInt(flag);
  return (raw: string): number[] => raw.split(',').map((x) => one(x.trim()));
}

type Lm = typeof import('@troupe/lm');

/** A Python with torch, or why there is none (`--no-torch`, not installed). */
async function torchPython(lm: Lm, wanted: boolean): Promise<{ python?: string; skipped?: string }> {
  if (!wanted) return { skipped: '--no-torch' };
  const found = await lm.findTorchPython();
  return found.python ? { python: found.python } : { skipped: found.reason! };
}

/** Thread counts of `--torch-threads`, each once, in the order given. */
function threadCounts(opts: BenchModelCliOptions): number[] {
  return [...new Set(opts.torchThreads)];
}

/**
 * The fastest of the thread counts for each of `keys` (`byThreads`: thread count → figures): its figure under the
 * key, and which thread count gave it under `threads`.
 */
function fastestTorch(
  byThreads: Record<string, Record<string, number>>,
  keys: readonly string[],
): Record<string, unknown> & { threads: Record<string, number> } {
  const best = (k: string): string =>
    Object.keys(byThreads).reduce((a, b) => (byThreads[b]![k]! > byThreads[a]![k]! ? b : a));
  return {
    ...Object.fromEntries(keys.map((k) => [k, byThreads[best(k)]![k]])),
    threads: Object.fromEntries(keys.map((k) => [k, Number(best(k))])),
  };
}

/** `fastest torch: gen tok/s b1 1 thread, ...`: which thread count each ratio is against. */
function fastestLine(threads: Record<string, number>, labels: readonly string[]): string {
  const keys = Object.keys(threads);
  return `fastest torch: ${keys.map((k, i) => `${labels[i]} ${threads[k]} thread${threads[k] === 1 ? '' : 's'}`).join(', ')}`;
}

/**
 * `troupe bench model --model DIR`: load time, peak RSS and KV-cached sampling tokens/s of a saved checkpoint (measured
 * in a fresh process), and the same from PyTorch (`torch_ref.py gen-bench`) at each `--torch-threads` count, the
 * fastest one being the yardstick of the ratios. `--runtime onnx` measures ONNX Runtime instead of tfjs (its load time
 * includes the export, or the reuse of a cached one).
 */
async function benchCheckpointCommand(lm: Lm, dir: string, opts: BenchModelCliOptions): Promise<void> {
  const batches = opts.genBatch ?? [1, 8],
    N = opts.genTokens ?? 32,
    P = opts.promptLen;
  const o = { model: dir, genBatches: batches, genTokens: N, promptLen: P };
  const ours =
    opts.runtime === 'onnx'
      ? await (
          await importOptional('@troupe/onnx', 'troupe bench model --runtime onnx', () => import('@troupe/onnx'))
        ).benchOnnxCheckpoint(o)
      : await lm.benchCheckpoint({ ...o, ...(opts.backend ? { backend: opts.backend as 'auto' } : {}) });
  const speedKeys = batches.map((b) => `gen_tokens_per_s_b${b}` as const);
  const { python, skipped } = await torchPython(lm, opts.torch);
  let torch: Record<string, unknown> | null = null;
  let torchSkipped = skipped;
  if (python) {
    const threads = threadCounts(opts);
    const commands = threads.flatMap((t) =>
      batches.map((b) => [
        'gen-bench',
        '--model',
        dir,
        '--threads',
        String(t),
        '--gen-batch',
        String(b),
        '--gen-tokens',
        String(N),
        '--prompt-len',
        String(P),
      ]),
    );
    try {
      const runs = await lm.runTorchRefBatch(python, commands, 3_600_000);
      const byThreads: Record<string, Record<string, number>> = {};
      threads.forEach((t, i) => {
        const mine = runs.slice(i * batches.length, (i + 1) * batches.length);
        byThreads[t] = {
          load_s: Number(mine[0]!.load_s),
          // one Python process runs every command: only the first load's peak RSS is that load's alone
          ...(i === 0 ? { peak_rss_mb: Number(mine[0]!.peak_rss_mb) } : {}),
          ...Object.fromEntries(speedKeys.map((k, j) => [k, Number(mine[j]!.gen_tokens_per_s)])),
        };
      });
      const first = byThreads[threads[0]!]!;
      torch = {
        impl: runs[0]!.impl,
        params: runs[0]!.params,
        load_s: first.load_s,
        peak_rss_mb: first.peak_rss_mb,
        ...fastestTorch(byThreads, speedKeys),
        by_threads: byThreads,
      };
    } catch (err) {
      torchSkipped = (err as Error).message;
    }
  }
  const ratios = torch
    ? Object.fromEntries(speedKeys.map((k) => [k, Math.round((ours[k] / Number(torch![k])) * 1000) / 1000]))
    : null;
  const result = {
    model: dir,
    runtime: opts.runtime,
    ...ours,
    torch,
    [`${opts.runtime}_over_torch`]: ratios,
    ...(torchSkipped ? { torch_skipped: torchSkipped } : {}),
  };
  if (opts.json) {
    printJson(result);
    return;
  }
  const cols = ['load s', 'peak RSS MB', ...batches.map((b) => `gen tok/s b${b}`)];
  const row = (name: string, r: Record<string, unknown>): string =>
    `${name.padEnd(30)} ${['load_s', 'peak_rss_mb', ...speedKeys].map((k) => String(r[k] ?? '').padStart(13)).join(' ')}`;
  const lines = [
    `checkpoint ${dir} (${ours.params} params), prompt ${P} tokens, ${N} new tokens per row`,
    `${''.padEnd(30)} ${cols.map((h) => h.padStart(13)).join(' ')}`,
    row(ours.impl, ours as unknown as Record<string, unknown>),
  ];
  if (torch) {
    for (const [t, r] of Object.entries(torch.by_threads as Record<string, Record<string, number>>))
      lines.push(row(`${String(torch.impl)} (${t} thread${t === '1' ? '' : 's'})`, r));
    lines.push(row(`${opts.runtime} / fastest torch`, ratios!));
    lines.push(
      fastestLine(
        torch.threads as Record<string, number>,
        batches.map((b) => `gen b${b}`),
      ),
    );
  } else lines.push(`torch: not measured (${torchSkipped})`);
  process.stdout.write(lines.join('\n') + '\n');
}

/**
 * `troupe bench model`: train / forward / generation tokens per second of the tfjs model, and — when a Python with
 * torch is available — the same workload from `torch_ref.py bench` at each `--torch-threads` count (one Python
 * process), the tfjs/torch ratios being against the fastest count of each figure. With `--model DIR`, the checkpoint
 * benchmark above instead.
 */
export function register(program: Command): void {
  const bench = program.command('bench').description('benchmarks');
  bench
    .command('model')
    .description(
      'tokens/s of the tfjs model (train step, forward, KV-cached sampling), and vs PyTorch when torch is installed',
    )
    .option(
      '--model <dir>',
      'benchmark this checkpoint instead: load time, peak RSS, sampling tokens/s at each --gen-batch',
    )
    .option('--preset <name>', 'model preset: tiny (~1M params) or small (~10M)', 'tiny')
    .option('--batch <n>', 'training / forward batch', positiveInt('--batch'), 16)
    .option('--seq <n>', 'sequence length', positiveInt('--seq'), 128)
    .option('--steps <n>', 'timed steps', positiveInt('--steps'), 5)
    .option(
      '--gen-batch <n,...>',
      'generation rows (default 16; with --model a list, default 1,8)',
      positiveIntList('--gen-batch'),
    )
    .option(
      '--gen-tokens <n>',
      'new tokens per generation row (default 112; with --model 32)',
      positiveInt('--gen-tokens'),
    )
    .option('--prompt-len <n>', 'prompt tokens (with --model)', positiveInt('--prompt-len'), 16)
    .option(
      '--torch-threads <n,...>',
      'PyTorch thread counts to measure; the ratios are against the fastest',
      positiveIntList('--torch-threads'),
      [1, 2],
    )
    .option(
      '--train-threads <n>',
      'threads of the tfjs training step: the batch shared out over data-parallel replicas (wasm, cpu)',
      positiveInt('--train-threads', 16),
      1,
    )
    .option('--backend <name>', 'tfjs backend: auto, tensorflow-gpu, tensorflow, webgpu, wasm, cpu')
    .option('--runtime <name>', 'with --model: tfjs, or onnx (ONNX Runtime on every CPU core)', runtimeOption, 'tfjs')
    .option('--no-torch', 'skip the PyTorch comparison')
    .option('--json', 'print one JSON document')
    .action(async (opts: BenchModelCliOptions) => {
      const lm = await importOptional('@troupe/lm', 'troupe bench model', () => import('@troupe/lm'));
      if (opts.model) return benchCheckpointCommand(lm, opts.model, opts);
      if (opts.runtime !== 'tfjs')
        throw new UsageError('--runtime onnx needs --model DIR (the presets are tfjs benchmarks)');
      if (!['tiny', 'small'].includes(opts.preset))
        throw new UsageError(`--preset must be tiny or small, got "${opts.preset}"`);
      if (opts.genBatch && opts.genBatch.length !== 1)
        throw new UsageError(`--gen-batch takes one number without --model, got ${opts.genBatch.join(',')}`);
      const genBatch = opts.genBatch?.[0] ?? 16,
        genTokens = opts.genTokens ?? 112;
      const tfjs = await lm.benchModel({
        preset: opts.preset as 'tiny',
        batch: opts.batch,
        seq: opts.seq,
        steps: opts.steps,
        genBatch,
        genTokens,
        trainThreads: opts.trainThreads,
        ...(opts.backend ? { backend: opts.backend as 'auto' } : {}),
      });
      const keys = ['train_tokens_per_s', 'forward_tokens_per_s', 'gen_tokens_per_s'] as const;
      let torch: Record<string, unknown> | null = null;
      const { python, skipped } = await torchPython(lm, opts.torch);
      let torchSkipped = skipped;
      if (python) {
        const threads = threadCounts(opts);
        const command = (t: number): string[] => [
          'bench',
          '--preset',
          opts.preset,
          '--batch',
          String(opts.batch),
          '--seq',
          String(opts.seq),
          '--steps',
          String(opts.steps),
          '--gen-batch',
          String(genBatch),
          '--gen-tokens',
          String(genTokens),
          '--threads',
          String(t),
        ];
        try {
          const runs = await lm.runTorchRefBatch(python, threads.map(command), 3_600_000);
          const byThreads = Object.fromEntries(
            threads.map((t, i) => [t, Object.fromEntries(keys.map((k) => [k, Number(runs[i]![k])]))]),
          );
          torch = {
            impl: runs[0]!.impl,
            params: runs[0]!.params,
            batch: runs[0]!.batch,
            seq: runs[0]!.seq,
            gen_batch: runs[0]!.gen_batch,
            ...fastestTorch(byThreads, keys),
            by_threads: byThreads,
          };
        } catch (err) {
          torchSkipped = (err as Error).message;
        }
      }
      const ratios = torch
        ? Object.fromEntries(keys.map((k) => [k, Math.round((tfjs[k] / Number(torch![k])) * 1000) / 1000]))
        : null;
      const result = { tfjs, torch, tfjs_over_torch: ratios, ...(torchSkipped ? { torch_skipped: torchSkipped } : {}) };
      if (opts.json) {
        printJson(result);
        return;
      }
      const row = (name: string, r: Record<string, unknown>): string =>
        `${name.padEnd(34)} ${keys.map((k) => String(r[k]).padStart(12)).join(' ')}`;
      const lines = [
        `model preset ${opts.preset} (${tfjs.params} params), batch ${opts.batch} × seq ${opts.seq}, generation ${genBatch} rows × ${genTokens} tokens`,
        `${''.padEnd(34)} ${['train tok/s', 'forward tok/s', 'gen tok/s'].map((h) => h.padStart(12)).join(' ')}`,
        row(tfjs.impl, tfjs as unknown as Record<string, unknown>),
      ];
      if (torch) {
        for (const [t, r] of Object.entries(torch.by_threads as Record<string, Record<string, number>>))
          lines.push(row(`${String(torch.impl)} (${t} thread${t === '1' ? '' : 's'})`, r));
        lines.push(row('tfjs / fastest torch', ratios!));
        lines.push(fastestLine(torch.threads as Record<string, number>, ['train', 'forward', 'gen']));
      } else lines.push(`torch: not measured (${torchSkipped})`);
      process.stdout.write(lines.join('\n') + '\n');
    });
}
