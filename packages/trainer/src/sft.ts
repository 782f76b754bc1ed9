/**
 * Warm start: supervised fine-tuning on the environment oracle's demonstrations. Each demonstration is one oracle
 * play-through of a train instance, played by the one turn loop with scripted oracle seats; at every (turn, seat) the
 * seat's ROLE builds the prompt from the REAL observation of the state along the oracle trajectory and renders the
 * oracle's action as the target text (exactly what the model would have to write), followed by the end-of-sequence
 * token.
 */
import {
  type Environment,
  oracleText,
  playOracle,
  type ChatMessage,
  type SeatBinding,
  createRng,
  deriveSeed,
  defaultWorkers,
  type WarmStartConfig,
} from '@troupe/kernel';
import { currentBackend, type SequencePair } from '@troupe/lm';
import type { PolicyHandle } from './policies.js';
import { sftInWorker } from './sft-thread.js';
import { sftRun, type SftRunResult, type SftRunSettings } from './sft-run.js';

/** One demonstration sample: what one seat should have written in one state. */
export interface Demonstration {
  /** Instance index in the train split's demonstration stream. */
  readonly index: number;
  /** Turn. */
  readonly turn: number;
  /** Seat. */
  readonly seat: string;
  /** Policy name of the seat. */
  readonly policy: string;
  /** The prompt (the role's prompt of the real observation). */
  readonly messages: readonly ChatMessage[];
  /** The target text (the role's rendering of the oracle action). */
  readonly text: string;
}

/** Options of {@link collectDemonstrations}. */
export interface DemonstrationOptions {
  /** Number of oracle play-throughs. */
  readonly count: number;
  /** Seed of the demonstration instance stream (train split). */
  readonly seed: number;
  /** Keep only play-throughs that ended in success. Default true (false when any seat's `noise` > 0). */
  readonly successfulOnly?: boolean;
  /**
   * Probability that the play-through takes a random action (the environment's `randomAction`) instead of the
   * oracle's at a (turn, seat); the recorded TARGET is always the oracle's action from the state reached. Default 0.
   * With noise the demonstrations also cover what pure oracle play never shows: a wrong proposal to correct, a
   * second turn from where a bad move left the walker (DART-style demonstrations). A map gives each seat its own
   * probability (seats not named: 0); a number is every seat's.
   */
  readonly noise?: number | Readonly<Record<string, number>>;
}

/**
 * Plays `count` train instances with the environment's oracle through the one turn loop (`playOracle`: every seat a
 * scripted oracle policy that renders its action with the seat's role) and returns one demonstration per (turn,
 * seat): the prompt the role built from the real observation, and the oracle's text. Throws naming the environment
 * when it has no oracle.
 */
export async function collectDemonstrations(
  environment: Environment,
  seats: readonly SeatBinding[],
  options: DemonstrationOptions,
): Promise<Demonstration[]> {
  if (!environment.oracle) {
    throw new Error(
      `warm start: environment '${environment.id}' has no oracle, so there are no demonstrations; remove 'algorithm.warmStart' from the team spec.`,
    );
  }
  const probability = options.noise ?? 0;
  const noiseOf = (seat: string): number => (typeof probability === 'number' ? probability : (probability[seat] ?? 0));
  const successfulOnly = options.successfulOnly ?? seats.every((seat) => noiseOf(seat.name) === 0);
  // one stream for all play-throughs, drawn in play order
  const noise = { probability, rng: createRng(deriveSeed(options.seed, 'demonstration-noise')) };
  const oracleSeats = seats.map((s) => ({ name: s.name, role: s.role, policy: s.policy.name }));
  const out: Demonstration[] = [];
  for (let index = 0; index < options.count; index++) {
    const instance = environment.instance('train', index, options.seed);
    const play = (await playOracle(environment, instance, { seats: oracleSeats, noise, seed: options.seed }))!;
    if (!play.end.success && successfulOnly) continue;
    out.push(
      ...play.steps.map((s) => ({
        index,
        turn: s.turn,
        seat: s.seat,
        policy: s.policy,
        messages: s.prompt,
        text: oracleText(s),
      })),
    );
  }
  return out;
}

/** The demonstrations with at most `caps[seat]` samples of each capped seat (its first ones, in play order). */
function capSamples(demos: readonly Demonstration[], caps: Readonly<Record<string, number>>): Demonstration[] {
  const seen = new Map<string, number>();
  return demos.filter((d) => {
    const n = (seen.get(d.seat) ?? 0) + 1;
    seen.set(d.seat, n);
    return n <= (caps[d.seat] ?? Infinity);
  });
}

/** Per-policy result of the warm start. */
export interface WarmStartResult {
  /** Demonstration samples per policy. */
  readonly samples: Record<string, number>;
  /** Mean SFT loss of the first and last epoch, per policy. */
  readonly firstEpochLoss: Record<string, number>;
  readonly lastEpochLoss: Record<string, number>;
  /** Optimizer steps per policy. */
  readonly optimizerSteps: Record<string, number>;
  /** Worker threads the policies trained in (0: all in the main thread). */
  readonly workers: number;
  /** Wall seconds. */
  readonly seconds: number;
}

/** One policy's SFT job. */
interface SftJob {
  readonly handle: PolicyHandle;
  readonly lm: NonNullable<PolicyHandle['trainable']>;
  readonly pairs: SequencePair[];
  readonly settings: SftRunSettings;
}

/**
 * SFT of every trainable policy on ITS seats' demonstrations (see {@link sftRun}). Full-model policies train in
 * parallel worker threads when the backend is single-threaded wasm/cpu and `config.workers` (default: the available
 * parallelism) allows more than one; the trained weights are copied back into the policy's own variables. Results
 * are the same as training them one after the other. Increments each trained policy's version once.
 */
export async function warmStart(
  handles: readonly PolicyHandle[],
  demos: readonly Demonstration[],
  config: WarmStartConfig,
  options: { seed: number; maxGradNorm: number; onProgress?: (policy: string, epoch: number, loss: number) => void },
): Promise<WarmStartResult> {
  const started = performance.now();
  const res: {
    samples: Record<string, number>;
    firstEpochLoss: Record<string, number>;
    lastEpochLoss: Record<string, number>;
    optimizerSteps: Record<string, number>;
  } = {
    samples: {},
    firstEpochLoss: {},
    lastEpochLoss: {},
    optimizerSteps: {},
  };
  const jobs: SftJob[] = [];
  const kept = capSamples(demos, config.maxSamples ?? {});
  for (const h of handles) {
    const lm = h.trainable;
    if (!lm) continue;
    const mine = kept.filter((d) => d.policy === h.name);
    res.samples[h.name] = mine.length;
    if (mine.length === 0) continue;
    const eos = lm.tokenizer.eosTokenId ?? lm.model.config.eosTokenIds[0];
    const pairs: SequencePair[] = mine.map((d) => ({
      promptIds: lm.promptIds(d.messages),
      completionIds: [...lm.tokenizer.encode(d.text), ...(eos !== undefined ? [eos] : [])],
    }));
    const settings = {
      rngSeed: deriveSeed(options.seed, 'warm-start', h.name),
      maxGradNorm: options.maxGradNorm,
      padId: lm.tokenizer.padTokenId ?? 0,
    };
    jobs.push({ handle: h, lm, pairs, settings });
  }
  const backend = currentBackend()?.backend;
  const threadable = (j: SftJob): boolean => !j.handle.lora && j.lm.model.lora.size === 0;
  const workers = Math.max(1, config.workers ?? defaultWorkers());
  const parallel = workers > 1 && (backend === 'wasm' || backend === 'cpu') && jobs.filter(threadable).length > 1;
  const record = (j: SftJob, r: SftRunResult): void => {
    res.firstEpochLoss[j.handle.name] = r.firstEpochLoss;
    res.lastEpochLoss[j.handle.name] = r.lastEpochLoss;
    res.optimizerSteps[j.handle.name] = r.steps;
    j.lm.version++;
  };
  const inThread = async (j: SftJob): Promise<void> => {
    record(
      j,
      await sftRun(j.lm.model, j.pairs, config, j.settings, (epoch, loss) =>
        options.onProgress?.(j.handle.name, epoch, loss),
      ),
    );
  };
  let threads = 0;
  if (!parallel) {
    for (const j of jobs) await inThread(j);
  } else {
    const queue = jobs.filter(threadable);
    const runNext = async (): Promise<void> => {
      for (let j = queue.shift(); j; j = queue.shift()) {
        const job = j;
        const r = await sftInWorker(job.lm.model, job.pairs, config, job.settings, backend!, (epoch, loss) =>
          options.onProgress?.(job.handle.name, epoch, loss),
        );
        record(job, r);
      }
    };
    threads = Math.min(workers, queue.length);
    await Promise.all(Array.from({ length: threads }, runNext));
    for (const j of jobs.filter((x) => !threadable(x))) await inThread(j);
  }
  return { ...res, workers: threads, seconds: (performance.now() - started) / 1000 };
}
