/**
 * The WebGPU backend in Node: `@tensorflow/tfjs-backend-webgpu` on Dawn's Node bindings (npm `webgpu`, a prebuilt
 * `dawn.node` inside the package). Both are optional peers of `@troupe/lm`; Dawn needs a Vulkan driver at run time
 * (`libvulkan1` plus a driver: a GPU's, or Mesa's lavapipe, a software one).
 *
 * tfjs-backend-webgpu registers itself only if `navigator.gpu` exists when it is first imported, so Dawn's globals
 * (`GPUBufferUsage`, ...) and `navigator.gpu` are installed first, then the backend is imported.
 *
 * `auto` never picks a fallback adapter (a software renderer such as lavapipe: slower than wasm on the same CPU);
 * `TROUPE_BACKEND=webgpu` (or `--backend webgpu`) uses it anyway.
 */
import * as tf from '@tensorflow/tfjs';
import { existsSync, readdirSync } from 'node:fs';
import { installWebGpuKernels } from './webgpu-kernels.js';

/** What Dawn says about the adapter tfjs would get (`powerPreference: 'high-performance'`, as tfjs asks). */
export interface WebGpuAdapterInfo {
  /** `mesa`, `nvidia`, `amd`, `intel`, ... (may be empty). */
  readonly vendor: string;
  /** `software` for lavapipe; a GPU family name otherwise (may be empty). */
  readonly architecture: string;
  /** The device name (may be empty). */
  readonly device: string;
  /** A human-readable line, e.g. `llvmpipe: Mesa 25.0.7 (LLVM 15.0.6)`. */
  readonly description: string;
  /** True for a software (fallback) adapter: `auto` does not pick it. */
  readonly isFallbackAdapter: boolean;
}

/** The result of `probeWebGpu`. */
export interface WebGpuProbe {
  /** Whether a WebGPU adapter was found (the backend can start when forced). */
  readonly available: boolean;
  /** Whether `auto` would use it (an adapter that is not a fallback one). */
  readonly autoPick: boolean;
  /** The adapter, when one was found. */
  readonly adapter?: WebGpuAdapterInfo;
  /** Why it is not available or not picked by `auto`, or what was found. */
  readonly detail: string;
}

/** The subset of the WebGPU API used here (the full types live in `@webgpu/types`, not needed at run time). */
interface GpuLike {
  requestAdapter(options?: { powerPreference?: string }): Promise<AdapterLike | null>;
}
interface AdapterLike {
  readonly info?: Partial<Record<'vendor' | 'architecture' | 'device' | 'description', string>> & {
    readonly isFallbackAdapter?: boolean;
  };
  readonly isFallbackAdapter?: boolean;
}

const DAWN_PKG = 'webgpu';
const TFJS_WEBGPU_PKG = '@tensorflow/tfjs-backend-webgpu';

let gpuPromise: Promise<GpuLike> | undefined;

/**
 * `navigator.gpu`, from the host (a browser, Deno) or from Dawn's Node bindings, which are loaded once and installed
 * as `navigator.gpu` with their globals (only names not already defined).
 */
function gpu(): Promise<GpuLike> {
  gpuPromise ??= (async () => {
    const nav = (globalThis as { navigator?: { gpu?: GpuLike } }).navigator;
    if (nav?.gpu) return nav.gpu;
    let dawn: { create(flags: string[]): GpuLike; globals: Record<string, unknown> };
    try {
      dawn = (await import(DAWN_PKG)) as typeof dawn;
    } catch (err) {
      throw new Error(`the '${DAWN_PKG}' package (Dawn for Node) is not installed or did not load: ${firstLine(err)}`, {
        cause: err,
      });
    }
    for (const [k, v] of Object.entries(dawn.globals)) if (!(k in globalThis)) Object.assign(globalThis, { [k]: v });
    const g = dawn.create([]);
    if (nav) Object.defineProperty(nav, 'gpu', { value: g, configurable: true, enumerable: true });
    else Object.defineProperty(globalThis, 'navigator', { value: { gpu: g }, configurable: true, writable: true });
    return g;
  })();
  // a failed load may be retried (e.g. after installing the package in a long-lived process)
  gpuPromise.catch(() => (gpuPromise = undefined));
  return gpuPromise;
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
}

function describe(a: WebGpuAdapterInfo): string {
  const what = [a.vendor, a.architecture, a.device].filter(Boolean).join(' ') || 'unnamed adapter';
  return `${what}${a.description ? ` (${a.description})` : ''}${a.isFallbackAdapter ? ', fallback adapter' : ''}`;
}

/**
 * Looks for a WebGPU adapter (loads Dawn, creates no device). Never throws: a missing package or Vulkan driver is
 * reported in `detail`.
 */
export async function probeWebGpu(): Promise<WebGpuProbe> {
  let adapter: AdapterLike | null;
  try {
    adapter = await (await gpu()).requestAdapter({ powerPreference: 'high-performance' });
  } catch (err) {
    return { available: false, autoPick: false, detail: firstLine(err) };
  }
  if (!adapter)
    return {
      available: false,
      autoPick: false,
      detail:
        "Dawn found no usable WebGPU adapter: it needs libvulkan1 and a Vulkan driver it accepts (a GPU vendor's, or Mesa >= 24 lavapipe; Debian 12's Mesa 22 is refused), see docs/gpu.md",
    };
  const i = adapter.info ?? {};
  const info: WebGpuAdapterInfo = {
    vendor: i.vendor ?? '',
    architecture: i.architecture ?? '',
    device: i.device ?? '',
    description: i.description ?? '',
    isFallbackAdapter: Boolean(i.isFallbackAdapter ?? adapter.isFallbackAdapter),
  };
  return info.isFallbackAdapter
    ? {
        available: true,
        autoPick: false,
        adapter: info,
        detail: `${describe(info)}: a software renderer, slower than wasm, so auto does not pick it (TROUPE_BACKEND=webgpu forces it)`,
      }
    : { available: true, autoPick: true, adapter: info, detail: describe(info) };
}

/**
 * On Linux, the GPU device files a hardware WebGPU adapter would use (`/dev/dri/renderD*`, `/dev/nvidia0`...,
 * `/dev/dxg` under WSL). None means Dawn could only find a software adapter; elsewhere the check is not made (null).
 */
export function gpuDeviceFiles(): string[] | null {
  if (process.platform !== 'linux') return null;
  const list = (dir: string, re: RegExp): string[] => {
    try {
      return readdirSync(dir)
        .filter((f) => re.test(f))
        .map((f) => `${dir}/${f}`);
    } catch {
      return [];
    }
  };
  return [
    ...list('/dev/dri', /^renderD\d+$/),
    ...list('/dev', /^nvidia\d+$/),
    ...(existsSync('/dev/dxg') ? ['/dev/dxg'] : []),
  ];
}

/**
 * Starts tfjs's webgpu backend. With `auto`, refuses a fallback adapter (the reason names it), and on a Linux machine
 * without GPU device files does not even load Dawn (only a software adapter could be there). Returns the adapter.
 */
export async function activateWebGpu(
  auto: boolean,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<WebGpuAdapterInfo> {
  if (auto && gpuDeviceFiles()?.length === 0)
    throw new Error(
      'no GPU device (/dev/dri/renderD*, /dev/nvidia*, /dev/dxg): only a software adapter could be found, slower than wasm (TROUPE_BACKEND=webgpu forces it)',
    );
  const probe = await probeWebGpu();
  if (!probe.available || !probe.adapter) throw new Error(probe.detail);
  if (auto && !probe.autoPick) throw new Error(probe.detail);
  if (!tf.findBackend('webgpu')) {
    try {
      await import(TFJS_WEBGPU_PKG);
    } catch (err) {
      throw new Error(`the '${TFJS_WEBGPU_PKG}' package is not installed or did not load: ${firstLine(err)}`, {
        cause: err,
      });
    }
    if (tf.getKernelsForBackend('webgpu').length === 0)
      throw new Error(`${TFJS_WEBGPU_PKG} loaded but registered no 'webgpu' backend`);
  }
  if (!(await tf.setBackend('webgpu'))) throw new Error(`tf.setBackend('webgpu') failed`);
  guardSyncReads();
  if (env.TROUPE_WEBGPU_KERNELS !== '0' && !installWebGpuKernels())
    throw new Error(`${TFJS_WEBGPU_PKG} does not look like the 4.x this code knows (its AddN kernel or device limits)`);
  return probe.adapter;
}

/** The part of tfjs's WebGPUBackend that `guardSyncReads` wraps. */
interface WebGpuBackendLike {
  readSync(dataId: object): unknown;
  readonly tensorMap: { get(dataId: object): { values?: unknown } | undefined };
  troupeGuarded?: boolean;
}

/**
 * tfjs-backend-webgpu reads a GPU buffer synchronously (`dataSync`, `arraySync`) through an `OffscreenCanvas`, which
 * Node lacks, and Dawn's Node bindings have no synchronous readback: such a read fails with
 * `OffscreenCanvas is not defined`. This replaces that failure with an error that says what to use instead; values
 * already on the CPU (tensors made from JS arrays) still read synchronously.
 */
function guardSyncReads(): void {
  if (typeof (globalThis as { OffscreenCanvas?: unknown }).OffscreenCanvas !== 'undefined') return;
  const backend = tf.findBackend('webgpu') as unknown as WebGpuBackendLike | null;
  if (!backend || backend.troupeGuarded) return;
  const readSync = backend.readSync.bind(backend);
  backend.readSync = (dataId) => {
    if (backend.tensorMap.get(dataId)?.values != null) return readSync(dataId);
    throw new Error(
      'webgpu in Node cannot read a GPU tensor synchronously (dataSync/arraySync): Dawn has no synchronous readback. ' +
        'Use the async forms (data(), array(), trainStepAsync), or another backend for this code path.',
    );
  };
  backend.troupeGuarded = true;
}
