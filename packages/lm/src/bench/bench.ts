/**
 * The model benchmark, the same workload as `torch_ref.py bench`: a token-level policy-gradient step
 * (`-(Σ logp·adv·mask)/Σ mask`, Adam) on random ids, a forward pass, and KV-cached sampling.
 */
import * as tf from '@tensorflow/tfjs';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRng } from '@troupe/kernel';
import { initBackend, type BackendName } from '../backend/index.js';
import { presetHfConfig, type PresetName } from '../lm/config.js';
import { CausalLM } from '../lm/model.js';
import { AdamW, packBatch, scatterToLayout, tokenLogprobs, trainStepAsync, type PackedBatch } from '../lm/train.js';
import { generateIds } from '../lm/generate.js';
import { DataParallel, shares } from '../lm/data-parallel.js';
import { BENCH_LOSS, benchPartLoss, type BenchPart } from './bench-loss.js';

/** Options of `benchModel`. */
export interface BenchModelOptions {
  /** Model preset. Default `tiny`. */
  readonly preset?: PresetName;
  /** Training / forward batch. Default 16. */
  readonly batch?: number;
  /** Sequence length. Default 128. */
  readonly seq?: number;
  /** Timed steps. Default 5. */
  readonly steps?: number;
  /** Generation rows. Default 16. */
  readonly genBatch?: number;
  /** New tokens per generation row. Default 112. */
  readonly genTokens?: number;
  /** Backend (default: auto / `TROUPE_BACKEND`). */
  readonly backend?: BackendName | 'auto';
  /**
   * Threads of the training step (default 1): above 1, the batch's rows are shared out over data-parallel replicas
   * (lm/data-parallel.ts; wasm and cpu). Forward and generation stay on one thread.
   */
  readonly trainThreads?: number;
}

/** What `benchModel` measures. */
export interface BenchModelResult {
  /** `tfjs <version> (<backend>)`. */
  readonly impl: string;
  /** The backend used. */
  readonly backend: string;
  /** Preset. */
  readonly preset: string;
  /** Parameters. */
  readonly params: number;
  /** Training batch. */
  readonly batch: number;
  /** Sequence length. */
  readonly seq: number;
  /** Training tokens per second (forward + backward + AdamW). */
  readonly train_tokens_per_s: number;
  /** Forward tokens per second. */
  readonly forward_tokens_per_s: number;
  /** Generated tokens per second (KV cache, sampling; all rows together). */
  readonly gen_tokens_per_s: number;
  /** Generation rows. */
  readonly gen_batch: number;
  /** Threads of the training step. */
  readonly train_threads: number;
}

const round = (x: number): number => Math.round(x * 10) / 10;

/**
 * One optimizer step of the reference's training workload (`torch_ref.py bench`): the token-level policy-gradient
 * loss `-(Σ logp·adv·mask) / Σ mask` on a packed batch (`adv` in the shifted layout, see `scatterToLayout`), AdamW.
 * What it costs is what the benchmark times; the trainer's own loss is the PPO step of @troupe/trainer.
 */
export async function benchTrainStep(
  model: CausalLM,
  optimizer: AdamW,
  packed: PackedBatch,
  adv: Float32Array,
): Promise<void> {
  const shape: [number, number] = [packed.B, packed.L - 1];
  // read asynchronously: the form that runs on every backend (webgpu in Node has no synchronous readback)
  await trainStepAsync(optimizer, () => {
    const mask = tf.tensor2d(packed.mask, shape);
    return tokenLogprobs(model, packed).mul(tf.tensor2d(adv, shape)).mul(mask).sum().div(mask.sum()).neg() as tf.Scalar;
  });
}

/** Runs the benchmark on the tfjs model. */
export async function benchModel(o: BenchModelOptions = {}): Promise<BenchModelResult> {
  const preset = o.preset ?? 'tiny',
    B = o.batch ?? 16,
    T = o.seq ?? 128,
    steps = o.steps ?? 5;
  const G = o.genBatch ?? 16,
    N = o.genTokens ?? 112,
    P = 16;
  const report = await initBackend(o.backend ? { backend: o.backend } : {});
  const model = CausalLM.random(presetHfConfig(preset), 0);
  const V = model.config.vocabSize;
  const rng = createRng('bench');
  try {
    const ids = Array.from({ length: B }, () => Array.from({ length: T }, () => rng.int(V)));
    const pairs = ids.map((r) => ({ promptIds: r.slice(0, 1), completionIds: r.slice(1) }));
    const packed = packBatch(pairs);
    const advantages = ids.map(() => rng.next() * 2 - 1);
    const adv = scatterToLayout(packed, advantages);
    let t0 = 0;
    const opt = new AdamW(model.trainableVariables(), { lr: 1e-4 });
    const threads = o.trainThreads ?? 1;
    let trainStep: () => Promise<unknown> = () => benchTrainStep(model, opt, packed, adv);
    let dp: DataParallel<BenchPart> | undefined;
    if (threads > 1) {
      const tokens = pairs.reduce((n, p) => n + p.completionIds.length, 0);
      const parts = shares(B, threads).map(([a, b]) => ({
        pairs: pairs.slice(a, b),
        advantages: advantages.slice(a, b),
        tokens,
      }));
      dp = DataParallel.start(model, opt, threads, benchPartLoss, BENCH_LOSS);
      trainStep = () => dp!.step(parts);
    }
    try {
      await trainStep();
      t0 = performance.now();
      for (let s = 0; s < steps; s++) await trainStep();
    } finally {
      await dp?.terminate();
    }
    const train = (B * T * steps) / ((performance.now() - t0) / 1000);
    opt.dispose();
    const fwd = async (): Promise<void> => {
      const logits = tf.tidy(
        () => model.forward(tf.tensor2d(packed.ids, [B, T], 'int32'), { differentiableEmbedding: false }).logits,
      );
      await logits.data();
      logits.dispose();
    };
    await fwd();
    t0 = performance.now();
    for (let s = 0; s < steps; s++) await fwd();
    const forward = (B * T * steps) / ((performance.now() - t0) / 1000);
    const prompt = Array.from({ length: P }, () => rng.int(V));
    const gen = (): Promise<unknown> =>
      generateIds(model, prompt, { maxNewTokens: N, n: G, seed: 1, temperature: 1, eosTokenIds: [] });
    await gen();
    t0 = performance.now();
    await gen();
    const genTps = (G * N) / ((performance.now() - t0) / 1000);
    return {
      impl: `tfjs ${tf.version.tfjs} (${report.backend})`,
      backend: report.backend,
      preset,
      params: model.numParams(),
      batch: B,
      seq: T,
      train_tokens_per_s: round(train),
      forward_tokens_per_s: round(forward),
      gen_tokens_per_s: round(genTps),
      gen_batch: G,
      train_threads: o.trainThreads ?? 1,
    };
  } finally {
    model.dispose();
  }
}

/** Path of the PyTorch reference script shipped in this package's assets. */
export function torchRefPath(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../assets/torch_ref.py');
}

function run(
  cmd: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(cmd, args as string[], { timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err
        ? typeof (err as { code?: unknown }).code === 'number'
          ? (err as { code: number }).code
          : 1
        : 0;
      res({ code, stdout: String(stdout), stderr: String(stderr) || (err ? err.message : '') });
    });
  });
}

/**
 * A Python with PyTorch: `TROUPE_TORCH_PYTHON`, else `/usr/bin/python3` (where Debian's torch goes), else
 * `python3`. Resolves with the interpreter, or with `undefined` and the reason none works.
 */
export async function findTorchPython(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<{ python?: string; reason?: string }> {
  const candidates = env.TROUPE_TORCH_PYTHON ? [env.TROUPE_TORCH_PYTHON] : ['/usr/bin/python3', 'python3'];
  const reasons: string[] = [];
  for (const py of candidates) {
    if (py.startsWith('/') && !existsSync(py)) {
      reasons.push(`${py}: not found`);
      continue;
    }
    const r = await run(py, ['-c', 'import torch; print(torch.__version__)'], 60_000);
    if (r.code === 0) return { python: py };
    reasons.push(`${py}: ${r.stderr.trim().split('\n').pop() ?? 'import torch failed'}`);
  }
  return {
    reason: `no Python with torch (${reasons.join('; ')}); install it with: apt-get install -y python3-torch libopenblas0-pthread`,
  };
}

const BATCH_DRIVER = `
import sys, json, io, contextlib, os
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import torch_ref
for argv in json.loads(sys.argv[2]):
    sys.argv = ['torch_ref.py'] + argv
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        torch_ref.main()
    lines = buf.getvalue().strip().splitlines()
    print(lines[-1] if lines else 'null', flush=True)
`;

/**
 * Runs several `torch_ref.py` commands in ONE Python process (torch imports once) and returns each command's JSON
 * output, in order. Throws with the script's stderr on failure.
 */
export async function runTorchRefBatch(
  python: string,
  commands: readonly (readonly string[])[],
  timeoutMs = 600_000,
): Promise<Record<string, unknown>[]> {
  const r = await run(python, ['-c', BATCH_DRIVER, torchRefPath(), JSON.stringify(commands)], timeoutMs);
  if (r.code !== 0)
    throw new Error(`torch_ref.py batch failed (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  const lines = r.stdout.trim().split('\n');
  if (lines.length !== commands.length)
    throw new Error(`torch_ref.py batch printed ${lines.length} results for ${commands.length} commands`);
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Runs `torch_ref.py` with `args` and parses its one JSON line; throws with its stderr on failure. */
export async function runTorchRef(
  python: string,
  args: readonly string[],
  timeoutMs = 600_000,
): Promise<Record<string, unknown>> {
  const r = await run(python, [torchRefPath(), ...args], timeoutMs);
  if (r.code !== 0)
    throw new Error(
      `torch_ref.py ${args[0]} failed (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`,
    );
  const line = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new Error(`torch_ref.py ${args[0]} printed no JSON: ${line.slice(0, 200)}`);
  }
}
