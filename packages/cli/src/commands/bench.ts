import type { Command } from 'commander';
import { UsageError, positiveInt, printJson } from '../errors.js';

interface BenchModelCliOptions {
  preset: string;
  batch: number;
  seq: number;
  steps: number;
  genBatch: number;
  genTokens: number;
  backend?: string;
  torch: boolean;
  json?: boolean;
}

/**
 * `troupe bench model`: train / forward / generation tokens per second of the tfjs model, and — when a Python with
 * torch is available — the same workload from `torch_ref.py bench` and the tfjs/torch ratios.
 */
export function register(program: Command): void {
  const bench = program.command('bench').description('benchmarks');
  bench
    .command('model')
    .description('tokens/s of the tfjs model (train step, forward, KV-cached sampling), and vs PyTorch when torch is installed')
    .option('--preset <name>', 'model preset: tiny (~1M params) or small (~10M)', 'tiny')
    .option('--batch <n>', 'training / forward batch', positiveInt('--batch'), 16)
    .option('--seq <n>', 'sequence length', positiveInt('--seq'), 128)
    .option('--steps <n>', 'timed steps', positiveInt('--steps'), 5)
    .option('--gen-batch <n>', 'generation rows', positiveInt('--gen-batch'), 16)
    .option('--gen-tokens <n>', 'new tokens per generation row', positiveInt('--gen-tokens'), 112)
    .option('--backend <name>', 'tfjs backend: auto, tensorflow-gpu, tensorflow, wasm, cpu')
    .option('--no-torch', 'skip the PyTorch comparison')
    .option('--json', 'print one JSON document')
    .action(async (opts: BenchModelCliOptions) => {
      if (!['tiny', 'small'].includes(opts.preset)) throw new UsageError(`--preset must be tiny or small, got "${opts.preset}"`);
      const lm = await import('@troupe/kernel/model');
      const tfjs = await lm.benchModel({
        preset: opts.preset as 'tiny', batch: opts.batch, seq: opts.seq, steps: opts.steps, genBatch: opts.genBatch,
        genTokens: opts.genTokens, ...(opts.backend ? { backend: opts.backend as 'auto' } : {}),
      });
      let torch: Record<string, unknown> | null = null;
      let torchSkipped: string | undefined;
      if (opts.torch) {
        const found = await lm.findTorchPython();
        if (!found.python) torchSkipped = found.reason;
        else {
          try {
            torch = await lm.runTorchRef(found.python, [
              'bench', '--preset', opts.preset, '--batch', String(opts.batch), '--seq', String(opts.seq), '--steps', String(opts.steps),
              '--gen-batch', String(opts.genBatch), '--gen-tokens', String(opts.genTokens),
            ]);
          } catch (err) {
            torchSkipped = (err as Error).message;
          }
        }
      } else torchSkipped = '--no-torch';
      const keys = ['train_tokens_per_s', 'forward_tokens_per_s', 'gen_tokens_per_s'] as const;
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
        `model preset ${opts.preset} (${tfjs.params} params), batch ${opts.batch} × seq ${opts.seq}, generation ${opts.genBatch} rows × ${opts.genTokens} tokens`,
        `${''.padEnd(34)} ${['train tok/s', 'forward tok/s', 'gen tok/s'].map((h) => h.padStart(12)).join(' ')}`,
        row(tfjs.impl, tfjs as unknown as Record<string, unknown>),
      ];
      if (torch) {
        lines.push(row(`${String(torch.impl)} (${String(torch.threads)} thread)`, torch));
        lines.push(row('tfjs / torch', ratios!));
      } else lines.push(`torch: not measured (${torchSkipped})`);
      process.stdout.write(lines.join('\n') + '\n');
    });
}
