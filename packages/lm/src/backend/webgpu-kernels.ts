/**
 * A guard on one kernel of `@tensorflow/tfjs-backend-webgpu` 4.x, installed by `initBackend` when the webgpu backend
 * starts (as ./wasm-kernels.ts does for wasm):
 *
 * - `AddN` compiles ONE shader over all its inputs, one storage buffer each, and the device tfjs requests keeps
 *   WebGPU's default limit of 8 storage buffers per shader stage: summing more tensors (AdamW's global gradient norm
 *   over every parameter, gradient accumulation) makes an invalid pipeline, and the result is garbage. The
 *   replacement sums chunks that fit the limit, then sums the partial sums; the values are the same up to the
 *   summation order.
 */
import * as tf from '@tensorflow/tfjs';

/** The parts of the webgpu backend used here (not in tfjs's public types). */
interface WebGpuBackendLike {
  readonly device: { readonly limits: { readonly maxStorageBuffersPerShaderStage: number } };
  disposeData(dataId: object): void;
}

type KernelArgs = { inputs: tf.TensorInfo[]; backend: unknown; attrs?: Record<string, unknown> };
type KernelFn = (args: KernelArgs) => tf.TensorInfo;

let installed = false;

/**
 * Replaces the webgpu backend's `AddN` with the chunked version above. Call after the webgpu backend is active;
 * idempotent. Returns false (and changes nothing) when the backend does not look like tfjs-backend-webgpu 4.x.
 */
export function installWebGpuKernels(): boolean {
  if (installed) return true;
  const backend = tf.findBackend('webgpu') as unknown as WebGpuBackendLike | null;
  const addN = tf.getKernel('AddN', 'webgpu');
  const limit = backend?.device?.limits?.maxStorageBuffersPerShaderStage;
  if (!backend || !addN || typeof limit !== 'number' || limit < 3) return false;
  const maxInputs = limit - 1; // one storage buffer is the output
  const orig = addN.kernelFunc as unknown as KernelFn;
  const chunked: KernelFn = (args) => {
    let inputs = args.inputs;
    const made: tf.TensorInfo[] = [];
    while (inputs.length > maxInputs) {
      const next: tf.TensorInfo[] = [];
      for (let i = 0; i < inputs.length; i += maxInputs) {
        const part = inputs.slice(i, i + maxInputs);
        if (part.length === 1) next.push(part[0]!);
        else {
          const sum = orig({ ...args, inputs: part });
          made.push(sum);
          next.push(sum);
        }
      }
      inputs = next;
    }
    const out = orig({ ...args, inputs });
    for (const t of made) backend.disposeData(t.dataId);
    return out;
  };
  tf.unregisterKernel('AddN', 'webgpu');
  tf.registerKernel({ ...addN, kernelFunc: chunked as unknown as tf.KernelFunc });
  installed = true;
  return true;
}
