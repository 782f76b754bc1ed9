/**
 * LoRA adapters on ONE shared base: the models made by `CausalLM.shareBase` hold their own adapters over the same base
 * tensors, and {@link SharedBaseBatcher} decodes the batched generate calls of several of them, made in one turn of
 * the event loop (a lockstep step asking two roles at once), as ONE batch: the base matmuls once for all rows, each
 * row's low-rank update from its own adapter (`ForwardOptions.rowAdapters`).
 */
import type { CausalLM } from './model.js';
import {
  abortError,
  generateBatch,
  type GeneratedSample,
  type GenerationItem,
  type GenerationShared,
} from './generate.js';

/** One caller's generate call waiting for its merged batch. */
interface PendingCall {
  readonly adapter: CausalLM;
  readonly items: readonly GenerationItem[];
  readonly shared: GenerationShared;
  readonly resolve: (out: GeneratedSample[][]) => void;
  readonly reject: (err: unknown) => void;
  settled: boolean;
}

/**
 * Merges the generate calls of models sharing one base into one decode. Calls made in the same turn of the event loop
 * (before a `setImmediate` fires) join one batch, in call order: what a lockstep step merges does not depend on timing
 * (the lockstep batcher starts every policy's merged call in one synchronous loop), so neither does the batch. A batch
 * takes at most one call per adapter (a second call of one adapter, e.g. a lockstep call split at its `maxSequences`,
 * goes to the next batch, so a batch never exceeds that cap per adapter) and calls of one tokenizer. Each row samples
 * from its own request's seeded stream, so the tokens do not depend on which other calls share the batch (up to float
 * rounding of the left-padded prompts).
 */
export class SharedBaseBatcher {
  private pending: PendingCall[] = [];
  private scheduled = false;
  /** Merged decodes run so far, and the calls they served (for tests and benchmarks). */
  readonly stats = { batches: 0, calls: 0 };

  /** @param base a model over the shared base (any of them: rows run through their own adapters) */
  constructor(private readonly base: CausalLM) {}

  /**
   * Samples `items` through `adapter`'s LoRA adapters (a model sharing the base), merged with the other calls of this
   * turn of the event loop. Rejects with an `AbortError` when `shared.signal` fires; the other calls go on.
   */
  generate(
    adapter: CausalLM,
    items: readonly GenerationItem[],
    shared: GenerationShared = {},
  ): Promise<GeneratedSample[][]> {
    if (!this.base.sharesBaseWith(adapter))
      return Promise.reject(new Error('SharedBaseBatcher: the adapter does not share the batcher’s base weights'));
    if (shared.signal?.aborted) return Promise.reject(abortError());
    if (items.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.pending.push({ adapter, items, shared, resolve, reject, settled: false });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        const calls = this.pending;
        this.pending = [];
        void this.run(calls);
      });
    });
  }

  /** Decodes the calls of one turn, batch after batch (see the class comment for what joins a batch). */
  private async run(calls: PendingCall[]): Promise<void> {
    let rest = calls;
    while (rest.length > 0) {
      const batch: PendingCall[] = [];
      const later: PendingCall[] = [];
      const tokenizer = rest[0]!.shared.tokenizer;
      for (const c of rest) {
        if (c.shared.tokenizer !== tokenizer || batch.some((b) => b.adapter === c.adapter)) later.push(c);
        else batch.push(c);
      }
      await this.decode(batch);
      rest = later;
    }
  }

  private async decode(calls: readonly PendingCall[]): Promise<void> {
    const settle = (c: PendingCall, fn: () => void): void => {
      if (c.settled) return;
      c.settled = true;
      fn();
    };
    // The merged decode stops only when every caller has aborted; a caller that aborts is answered at once.
    const controller = new AbortController();
    let live = calls.length;
    const cleanups: (() => void)[] = [];
    for (const c of calls) {
      const signal = c.shared.signal;
      if (!signal) continue;
      const onAbort = (): void => {
        settle(c, () => c.reject(abortError()));
        if (--live === 0) controller.abort();
      };
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        cleanups.push(() => signal.removeEventListener('abort', onAbort));
      }
    }
    const offsets: number[] = [];
    const items: GenerationItem[] = [];
    for (const c of calls) {
      offsets.push(items.length);
      for (const it of c.items) items.push({ ...it, adapter: c.adapter });
    }
    const callOf = (item: number): number => {
      let k = 0;
      while (k + 1 < offsets.length && offsets[k + 1]! <= item) k++;
      return k;
    };
    const tokenizer = calls[0]!.shared.tokenizer;
    const listeners = calls.some((c) => c.shared.onToken);
    try {
      if (live === 0) return;
      this.stats.batches++;
      this.stats.calls += calls.length;
      const out = await generateBatch(this.base, items, {
        ...(tokenizer ? { tokenizer } : {}),
        signal: controller.signal,
        ...(listeners
          ? {
              onToken: (item: number, sample: number, token: number, logprob: number) => {
                const k = callOf(item);
                calls[k]!.shared.onToken?.(item - offsets[k]!, sample, token, logprob);
              },
            }
          : {}),
      });
      calls.forEach((c, k) => settle(c, () => c.resolve(out.slice(offsets[k]!, offsets[k]! + c.items.length))));
    } catch (err) {
      for (const c of calls) settle(c, () => c.reject(err));
    } finally {
      for (const f of cleanups) f();
    }
  }
}
