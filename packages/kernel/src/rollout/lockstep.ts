/**
 * Lockstep batching: the `generate` calls of the episodes that run together are merged into one call per policy, and
 * only when EVERY running episode waits on a policy. The merged calls' contents then depend on the episodes' own
 * histories alone — never on timing (how long a sandbox run or a role's tool took) — so they are the same in every
 * run, and a model policy decodes them as one batch instead of one request after the other.
 *
 * Which episodes run is fixed too: the first `concurrency` episodes start, and each one that ends is replaced by the
 * next in order (what `mergeMap(…, concurrency)` subscribes), counted as running from the moment its predecessor ends.
 * A merged call lists its requests in episode order, split into calls of at most `maxSequences` sequences.
 */
import type { Completion, GenerationRequest, Policy } from '../contracts/policy.js';

/** Options of lockstep batching (see {@link LockstepBatcher}). */
export interface LockstepOptions {
  /** Most sequences (the requests' `n` summed) one merged call decodes; more are split into calls, in episode order. Default 64. */
  readonly maxSequences?: number;
}

/** One episode's call waiting for its merged call. */
interface Waiter {
  readonly episode: number;
  readonly policy: Policy;
  readonly requests: readonly GenerationRequest[];
  readonly resolve: (out: Completion[][]) => void;
  readonly reject: (err: unknown) => void;
  /** Set once resolved, rejected or aborted: later outcomes are dropped. */
  settled: boolean;
  /** The merged call it joined, told when this caller aborts. */
  onAbortInFlight?: () => void;
  cleanup?: () => void;
}

function settle(w: Waiter, fn: () => void): void {
  if (w.settled) return;
  w.settled = true;
  w.cleanup?.();
  fn();
}

/**
 * Merges the generate calls of `count` episodes run `concurrency` at a time (see the module comment). Wrap each
 * episode's policies with {@link wrap} and call {@link leave} when the episode ends (or fails, or is aborted).
 */
export class LockstepBatcher {
  private readonly running = new Set<number>();
  private readonly waiting = new Map<number, Waiter>();
  private next: number;
  private checkScheduled = false;
  private readonly maxSequences: number;

  constructor(
    readonly count: number,
    concurrency: number,
    options: LockstepOptions = {},
  ) {
    if (!Number.isInteger(count) || count < 0)
      throw new Error(`LockstepBatcher: count must be an integer >= 0, got ${count}`);
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new Error(`LockstepBatcher: concurrency must be an integer >= 1, got ${concurrency}`);
    const max = options.maxSequences ?? 64;
    if (!Number.isInteger(max) || max < 1)
      throw new Error(`LockstepBatcher: maxSequences must be an integer >= 1, got ${max}`);
    this.maxSequences = max;
    this.next = Math.min(count, concurrency);
    for (let i = 0; i < this.next; i++) this.running.add(i);
  }

  /** Episode `episode` ended (or failed, or was aborted): the next episode in order counts as running from now. */
  leave(episode: number): void {
    if (!this.running.delete(episode)) return;
    const w = this.waiting.get(episode);
    if (w) {
      this.waiting.delete(episode);
      settle(w, () => w.reject(new Error(`episode ${episode} ended while it waited for a generation`)));
    }
    if (this.next < this.count) this.running.add(this.next++);
    this.scheduleCheck();
  }

  /**
   * The policy as episode `episode` sees it: `name`, `kind`, `version` and the scripted marker are the wrapped
   * policy's; its `generate` waits for the next merged call. It has no `dispose`: the episodes share the policy, and
   * whoever built it disposes it.
   */
  wrap(episode: number, policy: Policy): Policy {
    const wrapper: Policy & { readonly scripted?: boolean } = {
      get name() {
        return policy.name;
      },
      get kind() {
        return policy.kind;
      },
      get version() {
        return policy.version;
      },
      get scripted() {
        return (policy as { scripted?: boolean }).scripted;
      },
      generate: (requests, opts) => {
        const signal = opts?.signal;
        if (signal?.aborted) return Promise.reject(signal.reason);
        if (requests.length === 0) return Promise.resolve([]);
        if (!this.running.has(episode))
          return Promise.reject(new Error(`LockstepBatcher: episode ${episode} is not running`));
        if (this.waiting.has(episode))
          return Promise.reject(new Error(`LockstepBatcher: episode ${episode} already waits for a generation`));
        return new Promise<Completion[][]>((resolve, reject) => {
          const w: Waiter = { episode, policy, requests, resolve, reject, settled: false };
          if (signal) {
            const onAbort = (): void => {
              if (this.waiting.get(episode) === w) this.waiting.delete(episode);
              const inFlight = w.onAbortInFlight;
              settle(w, () => reject(signal.reason));
              inFlight?.();
            };
            signal.addEventListener('abort', onAbort, { once: true });
            w.cleanup = () => signal.removeEventListener('abort', onAbort);
          }
          this.waiting.set(episode, w);
          this.scheduleCheck();
        });
      },
    };
    return wrapper;
  }

  /** Checks after the current turn of the event loop, so that whatever runs synchronously now has joined first. */
  private scheduleCheck(): void {
    if (this.checkScheduled) return;
    this.checkScheduled = true;
    setImmediate(() => {
      this.checkScheduled = false;
      this.flushIfAllWait();
    });
  }

  /**
   * When every running episode waits, merges the waiting calls per policy (policies in the order of their first
   * caller, callers in episode order) and starts them. Once every running episode waits nothing can change that
   * until a merged call returns, so the moment this runs does not change what is merged.
   */
  private flushIfAllWait(): void {
    if (this.running.size === 0 || this.waiting.size < this.running.size) return;
    const waiters = [...this.waiting.values()].sort((a, b) => a.episode - b.episode);
    this.waiting.clear();
    const byPolicy = new Map<Policy, Waiter[]>();
    for (const w of waiters) {
      const list = byPolicy.get(w.policy);
      if (list) list.push(w);
      else byPolicy.set(w.policy, [w]);
    }
    for (const [policy, list] of byPolicy) {
      let chunk: Waiter[] = [];
      let sequences = 0;
      for (const w of list) {
        const n = w.requests.reduce((s, r) => s + r.n, 0);
        if (chunk.length > 0 && sequences + n > this.maxSequences) {
          this.call(policy, chunk);
          chunk = [];
          sequences = 0;
        }
        chunk.push(w);
        sequences += n;
      }
      if (chunk.length > 0) this.call(policy, chunk);
    }
  }

  /** One merged call: every caller gets exactly its own completions (or the call's error). */
  private call(policy: Policy, callers: readonly Waiter[]): void {
    const controller = new AbortController();
    let live = callers.length;
    for (const w of callers)
      w.onAbortInFlight = () => {
        if (--live === 0) controller.abort();
      };
    const requests = callers.flatMap((w) => w.requests);
    const done = (fn: (w: Waiter, offset: number) => void): void => {
      let offset = 0;
      for (const w of callers) {
        fn(w, offset);
        offset += w.requests.length;
      }
    };
    policy.generate(requests, { signal: controller.signal, batch: true }).then(
      (out) => {
        if (!Array.isArray(out) || out.length !== requests.length) {
          const err = new Error(
            `Policy '${policy.name}' (${policy.kind}) returned ${Array.isArray(out) ? out.length : 'no'} results for a batch of ${requests.length} requests.`,
          );
          done((w) => settle(w, () => w.reject(err)));
          return;
        }
        done((w, offset) => settle(w, () => w.resolve(out.slice(offset, offset + w.requests.length))));
      },
      (err: unknown) => done((w) => settle(w, () => w.reject(err))),
    );
  }
}
