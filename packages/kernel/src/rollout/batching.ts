import type { Completion, GenerationRequest, Policy } from '../contracts/policy.js';

/** Options of {@link batchingPolicy}. */
export interface BatchingOptions {
  /** Flush as soon as this many requests are queued (an integer >= 1). Default 64. */
  readonly maxRequests?: number;
}

interface Pending {
  readonly requests: readonly GenerationRequest[];
  readonly signal: AbortSignal | undefined;
  readonly resolve: (out: Completion[][]) => void;
  readonly reject: (err: unknown) => void;
  settled: boolean;
  /** Called when the caller aborts after its requests joined a merged call. */
  inBatchAbort?: () => void;
  /** Removes the abort listener (an episode's signal outlives many calls). */
  cleanup?: () => void;
}

function settle(p: Pending, fn: () => void): void {
  if (p.settled) return;
  p.settled = true;
  p.cleanup?.();
  fn();
}

/**
 * Wraps a policy so that the `generate` calls of concurrently running episodes are merged into one call per event-loop
 * turn (or per `maxRequests` requests): a model policy then samples one batch instead of many small ones. Each caller
 * gets back exactly its own completions. Aborting one caller rejects only that caller (its requests still run in the
 * batch, their results are dropped); the merged call is aborted only when every caller in it has aborted.
 * `name`, `kind`, `version` and the scripted marker are those of the wrapped policy; `dispose` disposes it.
 */
export function batchingPolicy(inner: Policy, options: BatchingOptions = {}): Policy {
  const max = options.maxRequests ?? 64;
  if (!Number.isInteger(max) || max < 1) throw new Error(`batchingPolicy: maxRequests must be an integer >= 1, got ${String(max)}.`);
  let queue: Pending[] = [];
  let queued = 0;
  let scheduled = false;

  const flush = (): void => {
    scheduled = false;
    const batch = queue.filter((p) => !p.settled);
    queue = [];
    queued = 0;
    if (batch.length === 0) return;
    const controller = new AbortController();
    let live = batch.length;
    for (const p of batch) {
      p.inBatchAbort = () => {
        if (--live === 0) controller.abort(p.signal?.reason);
      };
    }
    const requests = batch.flatMap((p) => p.requests);
    inner.generate(requests, { signal: controller.signal }).then(
      (out) => {
        if (!Array.isArray(out) || out.length !== requests.length) {
          const err = new Error(`Policy '${inner.name}' (${inner.kind}) returned ${Array.isArray(out) ? out.length : 'no'} results for a batch of ${requests.length} requests.`);
          for (const p of batch) settle(p, () => p.reject(err));
          return;
        }
        let offset = 0;
        for (const p of batch) {
          const mine = out.slice(offset, offset + p.requests.length);
          offset += p.requests.length;
          settle(p, () => p.resolve(mine));
        }
      },
      (err: unknown) => {
        for (const p of batch) settle(p, () => p.reject(err));
      },
    );
  };

  const wrapper: Policy & { readonly scripted?: boolean } = {
    get name() {
      return inner.name;
    },
    get kind() {
      return inner.kind;
    },
    get version() {
      return inner.version;
    },
    get scripted() {
      return (inner as { scripted?: boolean }).scripted;
    },
    generate(requests, opts) {
      const signal = opts?.signal;
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (requests.length === 0) return Promise.resolve([]);
      return new Promise<Completion[][]>((resolve, reject) => {
        const pending: Pending = { requests, signal, resolve, reject, settled: false };
        if (signal) {
          const onAbort = (): void => {
            const inBatch = pending.inBatchAbort;
            settle(pending, () => reject(signal.reason));
            inBatch?.();
          };
          signal.addEventListener('abort', onAbort, { once: true });
          pending.cleanup = () => signal.removeEventListener('abort', onAbort);
        }
        queue.push(pending);
        queued += requests.length;
        if (queued >= max) flush();
        else if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    dispose() {
      return inner.dispose?.();
    },
  };
  return wrapper;
}
