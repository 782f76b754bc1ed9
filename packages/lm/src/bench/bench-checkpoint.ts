/**
 * The checkpoint benchmark behind `troupe bench model --model DIR`: load time, peak RSS and KV-cached sampling tokens/s
 * of a saved checkpoint (Troupe or Hugging Face layout, one file or shards), measured in a fresh Node process so that
 * nothing loaded before (another model, a previous benchmark) counts in its memory. The same workload in PyTorch is
 * `torch_ref.py gen-bench`.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BackendName } from '../backend/index.js';
import { createRng } from '@troupe/kernel';

/** Options of `benchCheckpoint`. */
export interface BenchCheckpointOptions {
  /** Checkpoint folder. */
  readonly model: string;
  /** Generation batch sizes, each timed on its own. Default [1, 8]. */
  readonly genBatches?: readonly number[];
  /** New tokens per row. Default 32. */
  readonly genTokens?: number;
  /** Prompt length (random ids, one prompt repeated over the batch). Default 16. */
  readonly promptLen?: number;
  /** Backend (default: auto / `TROUPE_BACKEND`). */
  readonly backend?: BackendName | 'auto';
}

/** What `benchCheckpoint` measures. */
export interface BenchCheckpointResult {
  /** `tfjs <version> (<backend>)`. */
  readonly impl: string;
  /** The backend used. */
  readonly backend: string;
  /** Parameters. */
  readonly params: number;
  /** Seconds from reading the folder to a usable model. */
  readonly load_s: number;
  /** Peak resident memory of the process right after loading, in MiB (the process started empty). */
  readonly peak_rss_mb: number;
  /** Peak resident memory after the generation runs too, in MiB. */
  readonly peak_rss_mb_after_gen: number;
  readonly gen_tokens: number;
  readonly prompt_len: number;
  /**
   * Generated tokens per second at each batch size (`gen_tokens_per_s_b<B>`): all rows' new tokens over the time of
   * the prompt's prefill plus the sampling steps, after a 2-token warm-up.
   */
  readonly [key: `gen_tokens_per_s_b${number}`]: number;
}

/** The child's one message: the result, or the error it hit (name kept, so a CheckpointError stays one). */
export type BenchCheckpointMessage =
  { readonly result: BenchCheckpointResult } | { readonly error: { readonly name: string; readonly message: string } };

const here = fileURLToPath(import.meta.url);

const round = (x: number): number => Math.round(x * 1000) / 1000;

/** Peak resident memory of this process so far, in MiB. */
export function peakRssMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 102.4) / 10; // maxRSS is in KiB
}

/** The benchmark's prompt: `length` ids drawn from a fixed stream (the same prompt for every runtime). */
export function benchPrompt(vocabSize: number, length: number): number[] {
  const rng = createRng('bench-checkpoint');
  return Array.from({ length }, () => rng.int(vocabSize));
}

/**
 * Times sampling at each batch size: `generate(n, tokens)` samples `n` rows of `tokens` new tokens of one prompt.
 * Each size gets a 2-token warm-up (kernels and buffers of that size), then a timed run of `tokens` new tokens;
 * returns `gen_tokens_per_s_b<n>`: all rows' new tokens over the run's time (prefill included).
 */
export async function timeSampling(
  generate: (n: number, tokens: number) => Promise<unknown>,
  batches: readonly number[],
  tokens: number,
): Promise<Record<string, number>> {
  const speeds: Record<string, number> = {};
  for (const n of batches) {
    await generate(n, 2);
    const t0 = performance.now();
    await generate(n, tokens);
    speeds[`gen_tokens_per_s_b${n}`] = round((n * tokens) / ((performance.now() - t0) / 1000));
  }
  return speeds;
}

/** Sends a child's one message to its parent, then ends the process (a backend's threads must not keep it alive). */
export function reportToParent(work: Promise<BenchCheckpointResult>): void {
  const send = (m: BenchCheckpointMessage): Promise<void> => new Promise((res) => process.send!(m, () => res()));
  work
    .then((result) => send({ result }))
    .catch((err: unknown) =>
      send({
        error:
          err instanceof Error ? { name: err.name, message: err.message } : { name: 'Error', message: String(err) },
      }),
    )
    .finally(() => process.exit());
}

/**
 * Runs the checkpoint benchmark in a fresh Node process (same loader flags as this one). `childScript` is the
 * process's file (default: the tfjs one beside this file; another runtime passes its own).
 */
export function benchCheckpoint(
  o: BenchCheckpointOptions,
  childScript = here.replace(/bench-checkpoint(\.[cm]?[jt]s)$/, `bench-checkpoint-child$1`),
): Promise<BenchCheckpointResult> {
  const child = fork(childScript, [JSON.stringify(o)], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  return new Promise((resolve, reject) => {
    let message: BenchCheckpointMessage | undefined;
    child.on('message', (m) => {
      message = m as BenchCheckpointMessage;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (message && 'result' in message) return resolve(message.result);
      if (message && 'error' in message)
        return reject(Object.assign(new Error(message.error.message), { name: message.error.name }));
      const tail = stderr.trim().split('\n').slice(-3).join(' | ');
      reject(
        new Error(
          `the benchmark process for ${o.model} ended (${signal ?? `exit ${code}`}) without a result${tail ? `: ${tail}` : ''}`,
        ),
      );
    });
  });
}
