/**
 * The request batcher of `troupe serve`: requests wait in a bounded queue and a single worker takes every queued
 * request (up to `maxBatch`) into one `generateBatch` call, so concurrent requests decode together. A full queue is
 * refused at once (the server answers 503) instead of growing without bound.
 */
import type { GeneratedSample, GenerationItem, LmConfig, Tokenizer } from '@troupe/lm';

/** A model the server decodes with: the tfjs `CausalLM`, or another runtime's (ONNX Runtime). */
export interface ServedModel {
  readonly config: LmConfig;
}

/** Thrown by `submit` when the queue is full. */
export class QueueFullError extends Error {
  constructor(limit: number) {
    super(`the server is overloaded: ${limit} requests are already waiting; retry later`);
    this.name = 'QueueFullError';
  }
}

/** Called with each token of a request as it is sampled (its sample index, token id and log-prob). */
export type OnToken = (sample: number, token: number, logprob: number) => void;

interface Job {
  readonly item: GenerationItem;
  readonly onToken: OnToken | undefined;
  readonly resolve: (samples: GeneratedSample[]) => void;
  readonly reject: (err: Error) => void;
}

/** `@troupe/lm`'s `generateBatch`, or another runtime's. */
export type GenerateBatch<M extends ServedModel> = (
  model: M,
  items: readonly GenerationItem[],
  shared: { tokenizer?: Tokenizer; onToken?: (item: number, sample: number, token: number, logprob: number) => void },
) => Promise<GeneratedSample[][]>;

/** Options of `Batcher`. */
export interface BatcherOptions {
  /** Most requests waiting (not yet decoding); one more is refused with `QueueFullError`. */
  readonly maxQueue: number;
  /** Most requests decoded in one batch. */
  readonly maxBatch: number;
}

/** Queues generation requests and decodes them in batches, one batch at a time. */
export class Batcher<M extends ServedModel> {
  private readonly queue: Job[] = [];
  private running = false;

  constructor(
    private readonly model: M,
    private readonly tokenizer: Tokenizer,
    private readonly generateBatch: GenerateBatch<M>,
    private readonly opts: BatcherOptions,
  ) {}

  /** Requests waiting for a batch. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Queues one prompt; resolves with its `n` samples, calling `onToken` with each token as it is sampled (never in
   * the same tick as `submit`). Throws `QueueFullError` at once when the queue is full.
   */
  submit(item: GenerationItem, onToken?: OnToken): Promise<GeneratedSample[]> {
    if (this.queue.length >= this.opts.maxQueue) throw new QueueFullError(this.opts.maxQueue);
    return new Promise((resolve, reject) => {
      this.queue.push({ item, onToken, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const jobs = this.queue.splice(0, this.opts.maxBatch);
        try {
          const onToken = (i: number, sample: number, token: number, logprob: number): void =>
            jobs[i]!.onToken?.(sample, token, logprob);
          const out = await this.generateBatch(
            this.model,
            jobs.map((j) => j.item),
            { tokenizer: this.tokenizer, onToken },
          );
          jobs.forEach((j, i) => j.resolve(out[i]!));
        } catch (err) {
          for (const j of jobs) j.reject(err as Error);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
