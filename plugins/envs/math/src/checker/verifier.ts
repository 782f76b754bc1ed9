/**
 * The answer verifier used by the math environment and `troupe verify math`: {@link checkEquivalence} with a HARD time
 * budget, off the training thread.
 *
 * The cheap layers (normalised strings, exact rationals, structures of those; bounded by the size guards) run on the
 * calling thread and answer most pairs in microseconds. A pair that needs the symbolic or numeric layers goes to a
 * small pool of worker threads. A job that overruns its budget is answered at the deadline (`undecided`, or the numeric
 * layer's `equal` when only the symbolic proof of it was still running) and its worker is terminated and replaced, so no answer (however hostile) can hold the caller for longer than the budget plus a
 * message round trip.
 */
import { Worker } from 'node:worker_threads';
import { checkExact, undecided, type EquivalenceOptions, type EquivalenceResult } from './equivalence.js';
import { budgetMsOf } from './guards.js';

/** A job sent to a worker. */
export interface VerifyJob {
  readonly id: number;
  readonly answer: string;
  readonly reference: string;
  readonly options: EquivalenceOptions;
}

/** A worker's reply. */
export interface VerifyReply {
  readonly id: number;
  readonly result: EquivalenceResult;
  /** A numeric-layer `equal` sent before the symbolic layer runs: the answer if that then overruns the budget. */
  readonly provisional?: boolean;
}

/** Options of a {@link MathVerifier}. */
export interface VerifierOptions {
  /** Worker threads for the symbolic and numeric layers (default 1). */
  readonly threads?: number;
}

/** A verdict with where it was computed and how long it took. */
export type TimedResult = EquivalenceResult & {
  /** Milliseconds from the call to the verdict (queueing for a busy worker included). */
  readonly elapsedMs: number;
  /** `main` (the cheap layers answered) or `worker`. */
  readonly thread: 'main' | 'worker';
};

/** Counters of a verifier (for metrics and the bench). */
export interface VerifierStats {
  /** Pairs the cheap layers answered on the calling thread. */
  main: number;
  /** Pairs sent to a worker. */
  worker: number;
  /** Verdicts that were `undecided` (guards or budget). */
  undecided: number;
  /** Workers terminated for overrunning a budget. */
  replaced: number;
}

/** A job waiting for, or running on, a worker. */
interface Pending {
  readonly job: VerifyJob;
  readonly budgetMs: number;
  readonly started: number;
  readonly resolve: (r: EquivalenceResult) => void;
  timer?: ReturnType<typeof setTimeout>;
  provisional?: EquivalenceResult;
}

/** One worker and the job it runs. */
interface Slot {
  worker: Worker;
  ready: boolean;
  running?: Pending;
}

/** Share of the budget the worker's own (cooperative) deadline gets; the hard deadline is the whole budget. */
const COOPERATIVE_SHARE = 0.9;

/**
 * The main thread's Node options a worker can take: without the inline script of `node -e`/`-p` and its
 * `--input-type`, which a worker started from a file refuses (it would die at start).
 */
function workerExecArgv(): string[] {
  const out: string[] = [];
  for (let i = 0; i < process.execArgv.length; i++) {
    const a = process.execArgv[i]!;
    if (['-e', '--eval', '-p', '--print'].includes(a)) i++;
    else if (!/^--(input-type|eval|print)(=|$)/.test(a)) out.push(a);
  }
  return out;
}

/** Starts the worker: the compiled entry from dist, or the tsx bootstrap from source. */
function startWorker(): Worker {
  const entry = import.meta.url.endsWith('.ts') ? './worker-source.mjs' : './verify-worker.js';
  return new Worker(new URL(entry, import.meta.url), { execArgv: workerExecArgv() });
}

/** Checks answers with a hard per-check time budget; see the module comment. Call {@link close} when done. */
export class MathVerifier {
  /** Counters since creation. */
  readonly stats: VerifierStats = { main: 0, worker: 0, undecided: 0, replaced: 0 };
  /** Why a worker died before it was ready; from then on symbolic checks are undecided (no respawn loop). */
  private startFailure?: string;
  private readonly threads: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(options: VerifierOptions = {}) {
    this.threads = Math.max(1, Math.floor(options.threads ?? 1));
  }

  /** Whether `answer` is equivalent to `reference`, within `options.budgetMs` (default 1000 ms). Never rejects. */
  async check(answer: string, reference: string, options: EquivalenceOptions = {}): Promise<TimedResult> {
    const started = performance.now();
    const budgetMs = budgetMsOf(options.budgetMs);
    const quick = checkExact(answer, reference, { ...options, budgetMs });
    if (quick) {
      this.stats.main++;
      if (quick.verdict === 'undecided') this.stats.undecided++;
      return { ...quick, elapsedMs: performance.now() - started, thread: 'main' };
    }
    if (this.closed) throw new Error('MathVerifier: check() after close()');
    this.stats.worker++;
    if (this.startFailure !== undefined) {
      this.stats.undecided++;
      return { ...undecided(this.startFailure), elapsedMs: performance.now() - started, thread: 'worker' };
    }
    const result = await new Promise<EquivalenceResult>((resolve) => {
      const job: VerifyJob = {
        id: this.nextId++,
        answer: String(answer),
        reference: String(reference),
        options: { ...options, budgetMs: budgetMs * COOPERATIVE_SHARE },
      };
      this.queue.push({ job, budgetMs, started, resolve });
      this.pump();
    });
    if (result.verdict === 'undecided') this.stats.undecided++;
    return { ...result, elapsedMs: performance.now() - started, thread: 'worker' };
  }

  /** Terminates the workers. Pending checks are answered `undecided`. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.resolve(undecided('the verifier was closed'));
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      if (slot.running) {
        clearTimeout(slot.running.timer);
        slot.running.resolve(undecided('the verifier was closed'));
      }
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  /** Starts workers as needed and hands queued jobs to idle ready ones. */
  private pump(): void {
    while (
      this.startFailure === undefined &&
      this.slots.length < this.threads &&
      this.slots.length < this.queue.length + this.busy()
    )
      this.slots.push(this.spawn());
    for (const slot of this.slots) {
      if (!slot.ready || slot.running) continue;
      const pending = this.queue.shift();
      if (!pending) break;
      slot.running = pending;
      pending.timer = setTimeout(() => this.overrun(slot, pending), pending.budgetMs);
      slot.worker.postMessage(pending.job);
    }
    this.holdProcess();
  }

  /**
   * Workers keep the process alive only while checks wait for them (a worker still booting for a queued check
   * included); an idle verifier never does.
   */
  private holdProcess(): void {
    const waiting = this.queue.length > 0;
    for (const slot of this.slots) {
      if (slot.running || waiting) slot.worker.ref();
      else slot.worker.unref();
    }
  }

  /** Jobs running now. */
  private busy(): number {
    return this.slots.filter((s) => s.running).length;
  }

  /** A new worker slot. */
  private spawn(): Slot {
    const slot: Slot = { worker: startWorker(), ready: false };
    slot.worker.on('message', (m: VerifyReply | { ready: true }) => {
      if ('ready' in m) {
        slot.ready = true;
        this.pump();
        return;
      }
      const pending = slot.running;
      if (!pending || pending.job.id !== m.id) return;
      if (m.provisional) {
        pending.provisional = m.result;
        return;
      }
      clearTimeout(pending.timer);
      slot.running = undefined;
      pending.resolve(m.result);
      this.pump();
    });
    const fail = (why: string): void => {
      if (!this.slots.includes(slot)) return;
      if (!slot.ready) {
        // A worker that cannot start would fail the same way again: answer what waits, and start no more.
        this.startFailure = `the verifier's worker could not start (${why}); symbolic checks are undecided`;
        this.slots.splice(this.slots.indexOf(slot), 1);
        for (const queued of this.queue.splice(0)) queued.resolve(undecided(this.startFailure));
        return;
      }
      const pending = slot.running;
      this.replace(slot);
      if (pending) {
        clearTimeout(pending.timer);
        pending.resolve(undecided(`the verifier's worker failed (${why})`));
      }
    };
    slot.worker.on('error', (err) => fail(err.message));
    slot.worker.on('exit', (code) => fail(`exit code ${code}`));
    slot.worker.unref(); // after the listeners: adding a 'message' listener refs the worker's port again
    return slot;
  }

  /** A job ran past its budget: answer undecided now, and replace its worker (it may be stuck in a CPU loop). */
  private overrun(slot: Slot, pending: Pending): void {
    if (slot.running !== pending) return;
    this.stats.replaced++;
    this.replace(slot);
    const late = `the symbolic layer ran past the ${pending.budgetMs} ms budget`;
    pending.resolve(
      pending.provisional
        ? { ...pending.provisional, details: `${pending.provisional.details}; ${late}` }
        : undecided(`the ${pending.budgetMs} ms budget ran out`),
    );
  }

  /** Terminates a slot's worker and puts a fresh one in its place (when jobs remain). */
  private replace(slot: Slot): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    this.slots.splice(at, 1);
    slot.running = undefined;
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => {
      /* terminating */
    });
    void slot.worker.terminate();
    if (!this.closed) this.pump();
  }
}

let shared: MathVerifier | undefined;

/**
 * The process-wide verifier (one worker thread, started on the first pair that needs it and never keeping the process
 * alive): what the environment and the CLI use unless a config asks for more threads. Booting a worker loads mathjs
 * again (hundreds of milliseconds), so sharing one matters when many environments are created.
 */
export function sharedVerifier(): MathVerifier {
  shared ??= new MathVerifier();
  return shared;
}
