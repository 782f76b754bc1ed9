/**
 * tfjs backend selection. The order tried is `tensorflow-gpu` (`@tensorflow/tfjs-node-gpu`), `tensorflow`
 * (`@tensorflow/tfjs-node`), `webgpu` (`@tensorflow/tfjs-backend-webgpu` on Dawn, npm `webgpu`; see ./webgpu.ts),
 * `wasm` (`@tensorflow/tfjs-backend-wasm`), then `cpu`. The native and GPU packages are optional peers that a user
 * installs; where they are absent or fail to load (no libtensorflow, no Vulkan driver) every probe catches ANY error
 * and records why the backend was skipped. `auto` skips a webgpu fallback (software) adapter.
 *
 * Override with `initBackend({ backend })` or the `TROUPE_BACKEND` environment variable
 * (`tensorflow-gpu | tensorflow | webgpu | wasm | cpu | auto`).
 */
import * as tf from '@tensorflow/tfjs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { installWasmKernels } from './wasm-kernels.js';
import { activateWebGpu, type WebGpuAdapterInfo, type WebGpuProbe } from './webgpu.js';

export { gpuDeviceFiles, probeWebGpu, type WebGpuAdapterInfo, type WebGpuProbe } from './webgpu.js';
export { matMulUnpacked } from './wasm-kernels.js';

/** The backends Troupe knows, in preference order. */
export const BACKEND_ORDER = ['tensorflow-gpu', 'tensorflow', 'webgpu', 'wasm', 'cpu'] as const;

/** A backend name as written in options and `TROUPE_BACKEND`. */
export type BackendName = (typeof BACKEND_ORDER)[number];

/** What `initBackend` chose and why the others were skipped. */
export interface BackendReport {
  /** The backend now active. */
  readonly backend: BackendName;
  /** The tfjs engine's own name for it (`tensorflow`, `webgpu`, `wasm`, `cpu`). */
  readonly tfBackend: string;
  /** For `webgpu`: the adapter in use. */
  readonly adapter?: WebGpuAdapterInfo;
  /** Where the choice came from. */
  readonly source: 'option' | 'env' | 'auto';
  /** Each backend tried before the chosen one, with the reason it was skipped. */
  readonly skipped: readonly { readonly backend: BackendName; readonly reason: string }[];
}

/** Options of `initBackend`. */
export interface BackendOptions {
  /** Force a backend (`auto` or absent: try them in order). Overrides `TROUPE_BACKEND`. */
  readonly backend?: BackendName | 'auto';
  /** Environment to read `TROUPE_BACKEND` from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Probe again even if a backend was already chosen (default false: the first choice sticks for `auto`). */
  readonly fresh?: boolean;
}

const require = createRequire(import.meta.url);
let current: BackendReport | undefined;

function errorText(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split('\n')[0]!.slice(0, 300);
}

/**
 * A backend that was asked for (by name, TROUPE_BACKEND or `auto`) and cannot run here: the message names where the
 * name came from, why each candidate failed and what to choose instead; the CLI prints it without a stack trace.
 */
export class BackendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackendError';
  }
}

/** Checks a backend name from an option or the environment; throws a usage-style error naming the source. */
function parseName(value: string, source: string): BackendName | 'auto' {
  const v = value.trim().toLowerCase();
  if (v === 'auto' || (BACKEND_ORDER as readonly string[]).includes(v)) return v as BackendName | 'auto';
  throw new BackendError(`${source}: unknown backend '${value}'; use one of auto, ${BACKEND_ORDER.join(', ')}`);
}

/** The folder holding `@tensorflow/tfjs-backend-wasm`'s `.wasm` files, with a trailing slash. */
export function wasmDistDir(): string {
  const pkg = require.resolve('@tensorflow/tfjs-backend-wasm/package.json');
  return join(dirname(pkg), 'dist') + '/';
}

async function tryActivate(
  name: BackendName,
  env: Readonly<Record<string, string | undefined>>,
  auto: boolean,
): Promise<{ tfBackend: string; adapter?: WebGpuAdapterInfo }> {
  switch (name) {
    case 'tensorflow-gpu':
    case 'tensorflow': {
      const pkg = name === 'tensorflow-gpu' ? '@tensorflow/tfjs-node-gpu' : '@tensorflow/tfjs-node';
      await import(pkg);
      if (!tf.findBackend('tensorflow')) throw new Error(`${pkg} loaded but registered no 'tensorflow' backend`);
      if (!(await tf.setBackend('tensorflow'))) throw new Error(`tf.setBackend('tensorflow') failed`);
      return { tfBackend: 'tensorflow' };
    }
    case 'webgpu':
      return { tfBackend: 'webgpu', adapter: await activateWebGpu(auto, env) };
    case 'wasm': {
      const wasm = await import('@tensorflow/tfjs-backend-wasm');
      const dir = wasmDistDir();
      if (!existsSync(join(dir, 'tfjs-backend-wasm.wasm'))) throw new Error(`no tfjs-backend-wasm.wasm in ${dir}`);
      wasm.setWasmPaths(dir);
      if (!(await tf.setBackend('wasm'))) throw new Error(`tf.setBackend('wasm') failed`);
      if (env.TROUPE_WASM_KERNELS !== '0') installWasmKernels();
      return { tfBackend: 'wasm' };
    }
    case 'cpu':
      if (!(await tf.setBackend('cpu'))) throw new Error(`tf.setBackend('cpu') failed`);
      return { tfBackend: 'cpu' };
  }
}

/**
 * Activates the best available backend (or the one asked for) and reports the choice. Idempotent: a second call with
 * the same request returns the first report. A forced backend that fails throws, naming the backend and the reason.
 */
export async function initBackend(options: BackendOptions = {}): Promise<BackendReport> {
  const env = options.env ?? process.env;
  let wanted: BackendName | 'auto' = 'auto';
  let source: BackendReport['source'] = 'auto';
  if (options.backend && options.backend !== 'auto') {
    wanted = parseName(options.backend, 'backend option');
    source = 'option';
  } else if (!options.backend && env.TROUPE_BACKEND) {
    wanted = parseName(env.TROUPE_BACKEND, 'TROUPE_BACKEND');
    source = wanted === 'auto' ? 'auto' : 'env';
  }
  if (current && !options.fresh && (wanted === 'auto' || current.backend === wanted)) return current;
  const skipped: { backend: BackendName; reason: string }[] = [];
  const candidates: readonly BackendName[] = wanted === 'auto' ? BACKEND_ORDER : [wanted];
  for (const name of candidates) {
    try {
      const { tfBackend, adapter } = await tryActivate(name, env, wanted === 'auto');
      await tf.ready();
      current = { backend: name, tfBackend, source, skipped, ...(adapter ? { adapter } : {}) };
      return current;
    } catch (err) {
      skipped.push({ backend: name, reason: errorText(err) });
    }
  }
  const why = skipped.map((s) => `${s.backend}: ${s.reason}`).join('; ');
  throw new BackendError(
    wanted === 'auto'
      ? `no tfjs backend could be started (${why})`
      : `backend '${wanted}' (from ${source === 'env' ? 'TROUPE_BACKEND' : 'the backend option'}) could not be started: ${why}. ` +
          `Unset it or choose another of ${BACKEND_ORDER.join(', ')}.`,
  );
}

/** The report of the last successful `initBackend`, if any. */
export function currentBackend(): BackendReport | undefined {
  return current;
}

/** One line of `probeBackends`. */
export interface BackendProbe {
  /** The backend. */
  readonly backend: BackendName;
  /** Whether it looks usable (its package resolves and, for wasm, its `.wasm` files are present). */
  readonly available: boolean;
  /** Why not, or where it was found. */
  readonly detail: string;
}

/**
 * A light check for `troupe doctor`: says which backend `initBackend()` would pick without loading native code
 * (it only resolves packages and looks for files). `TROUPE_BACKEND` is honoured in `wouldUse`. Whether `auto` picks
 * webgpu depends on the adapter, which only loading Dawn tells: pass `probeWebGpu()`'s result as `webgpu` to count it
 * (without it, webgpu is listed as not picked).
 */
export function probeBackends(
  env: Readonly<Record<string, string | undefined>> = process.env,
  webgpu?: WebGpuProbe,
): {
  readonly wouldUse: BackendName | undefined;
  readonly override?: string;
  readonly probes: readonly BackendProbe[];
} {
  const probes: BackendProbe[] = [];
  for (const name of BACKEND_ORDER) {
    try {
      if (name === 'cpu') {
        probes.push({ backend: name, available: true, detail: 'built into @tensorflow/tfjs' });
        continue;
      }
      if (name === 'wasm') {
        const dir = wasmDistDir();
        const ok = existsSync(join(dir, 'tfjs-backend-wasm.wasm'));
        probes.push({ backend: name, available: ok, detail: ok ? dir : `no tfjs-backend-wasm.wasm in ${dir}` });
        continue;
      }
      if (name === 'webgpu') {
        for (const pkg of ['webgpu', '@tensorflow/tfjs-backend-webgpu']) require.resolve(`${pkg}/package.json`);
        probes.push({
          backend: name,
          available: webgpu?.autoPick ?? false,
          detail: webgpu?.detail ?? 'installed; whether auto picks it depends on the adapter (troupe doctor checks it)',
        });
        continue;
      }
      const pkg = name === 'tensorflow-gpu' ? '@tensorflow/tfjs-node-gpu' : '@tensorflow/tfjs-node';
      const main = require.resolve(`${pkg}/package.json`);
      const lib = join(dirname(main), 'lib');
      const ok = existsSync(lib);
      probes.push({
        backend: name,
        available: ok,
        detail: ok ? dirname(main) : `${pkg} is installed without its native lib/ (its install failed)`,
      });
    } catch (err) {
      probes.push({ backend: name, available: false, detail: `not installed (${errorText(err)})` });
    }
  }
  let wouldUse = probes.find((p) => p.available)?.backend;
  const override = env.TROUPE_BACKEND;
  if (override && override !== 'auto' && (BACKEND_ORDER as readonly string[]).includes(override))
    wouldUse = override as BackendName;
  return override ? { wouldUse, override, probes } : { wouldUse, probes };
}

/**
 * Makes a following synchronous read (`dataSync`, `arraySync`) of these tensors work on every backend: webgpu in
 * Node cannot read the GPU synchronously, so there their values are read asynchronously first and stay cached on the
 * CPU while the tensors live (a variable's `assign` points it at new data). Elsewhere it does nothing.
 */
export async function syncReadable(tensors: readonly tf.Tensor[]): Promise<void> {
  if (tf.getBackend() !== 'webgpu') return;
  await Promise.all(tensors.map((t) => t.data()));
}

/** Re-export of the tfjs namespace this package uses, so callers share one copy. */
export { tf };
