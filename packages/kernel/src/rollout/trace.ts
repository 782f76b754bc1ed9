import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { ChatMessage, Split } from '../contracts/common.js';
import type { Termination } from '../contracts/environment.js';
import { groupAdvantages, type AdvantageOptions } from '../algorithms/advantages.js';
import type { EpisodeEvent, StepRecord } from '../episode/events.js';
import { EpisodeAssembler } from './records.js';

/** One line of a rollout trace (JSONL): one step record (one branch of one (instance, turn, seat)), as written to disk. */
export interface TraceRecord {
  /** Training step (or null outside training). */
  readonly step: number | null;
  /** Episode id. */
  readonly episodeId: string;
  /** Instance uid. */
  readonly instanceUid: string;
  /** Split of the instance. */
  readonly split: Split;
  /** Turn. */
  readonly turn: number;
  /** Seat. */
  readonly seat: string;
  /** Role id. */
  readonly role: string;
  /** Policy name. */
  readonly policy: string;
  /** Policy version at sampling time. */
  readonly policyVersion: number;
  /** Branch index. */
  readonly branch: number;
  /** The prompt (identical across the group's branches). */
  readonly prompt: readonly ChatMessage[];
  /** The completion text. */
  readonly completion: string;
  /** The parsed action, or null when it did not parse. */
  readonly action: unknown;
  /** Why the completion did not parse, or null. */
  readonly parseError: string | null;
  /** Every reward term, separately. */
  readonly terms: Readonly<Record<string, number>>;
  /** Mixed reward. */
  readonly reward: number;
  /** Group-relative advantage, or null until computed. */
  readonly advantage: number | null;
  /** Whether the episode continued from this branch. */
  readonly selected: boolean;
  /** Present (true) on the tree's greedy branch (`algorithm.greedyBranch`). */
  readonly greedy?: true;
  /** Termination flags of this branch's step. */
  readonly done: Termination;
  /** Whether this branch's state is solved. */
  readonly success: boolean;
  /** Completion token ids (only with `tokens: true`). */
  readonly tokenIds?: readonly number[];
  /** Completion log-probs under the sampling distribution (only with `tokens: true`). */
  readonly logprobs?: readonly number[];
  /**
   * The sampling temperature the log-probs are of (0: greedy, log-probs at 1; a greedy branch records its seat's
   * temperature, which its log-probs are of) (only with `tokens: true`).
   */
  readonly temperature?: number;
}

/** Builds the trace line of one step record. */
export function toTraceRecord(
  record: StepRecord,
  options: { step?: number | null; advantage?: number | null; tokens?: boolean } = {},
): TraceRecord {
  return {
    step: options.step ?? null,
    episodeId: record.episodeId,
    instanceUid: record.instanceUid,
    split: record.split,
    turn: record.turn,
    seat: record.seat,
    role: record.role,
    policy: record.policy,
    policyVersion: record.policyVersion,
    branch: record.branch,
    prompt: record.prompt,
    completion: record.completion,
    action: record.parseError === undefined ? (record.action ?? null) : null,
    parseError: record.parseError ?? null,
    terms: record.terms,
    reward: record.reward,
    advantage: options.advantage ?? null,
    selected: record.selected,
    ...(record.greedy === true ? { greedy: true as const } : {}),
    done: record.done,
    success: record.success,
    ...(options.tokens
      ? { tokenIds: record.tokenIds, logprobs: record.logprobs, temperature: record.temperature }
      : {}),
  };
}

/** Options of {@link TraceWriter}. */
export interface TraceWriterOptions {
  /** Training step written in every record. Default null. */
  readonly step?: number;
  /** Also write completion token ids and log-probs. Default false. */
  readonly tokens?: boolean;
  /**
   * Compute each group's advantages when the group closes (its K branches of one (turn, seat) of one episode — the
   * AT-GRPO group when each instance is played once). Default: advantages are written as null.
   */
  readonly advantages?: AdvantageOptions;
  /** Append to an existing file instead of truncating it. Default false. */
  readonly append?: boolean;
}

/**
 * A subscriber that writes a JSONL trace, one line per step record, through a write stream. Records of a group are
 * written when the group closes (its selection is known). Use it with `tap`:
 *
 * ```ts
 * const trace = new TraceWriter('runs/x/trace.jsonl', { step: 3 });
 * await lastValueFrom(runEpisodes(contexts, { concurrency: 4 }).pipe(tap(trace)));
 * await trace.close();   // flushed and closed (also closed automatically on complete / error / unsubscribe)
 * ```
 */
export class TraceWriter {
  private readonly stream: WriteStream;
  private readonly assembler = new EpisodeAssembler();
  private readonly finished: Promise<void>;
  private streamError: Error | undefined;
  private ending = false;
  /** Number of records written so far. */
  records = 0;

  /**
   * Opens (creates or truncates) the file; parent folders are created.
   * @param path The JSONL file to write.
   * @param options Step, tokens, advantages, append.
   */
  constructor(
    /** The JSONL file being written. */
    readonly path: string,
    private readonly options: TraceWriterOptions = {},
  ) {
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (err) {
      throw new Error(
        `Trace file ${path}: cannot create its folder (${(err as Error).message}). Choose another output path.`,
        { cause: err },
      );
    }
    this.stream = createWriteStream(path, { flags: options.append ? 'a' : 'w', encoding: 'utf8' });
    this.finished = new Promise<void>((resolve) => {
      this.stream.on('error', (err) => {
        this.streamError = err;
        resolve();
      });
      this.stream.on('close', () => resolve());
    });
  }

  /** Feeds one event (an rxjs observer's `next`). */
  next(event: EpisodeEvent): void {
    const out = this.assembler.push(event);
    if (!out.group || this.ending) return;
    const steps = out.group.steps;
    const adv = this.options.advantages
      ? groupAdvantages(
          steps.map((s) => s.reward),
          this.options.advantages,
        )
      : undefined;
    let chunk = '';
    steps.forEach((s, i) => {
      chunk +=
        JSON.stringify(
          toTraceRecord(s, {
            step: this.options.step ?? null,
            advantage: adv ? adv[i]! : null,
            tokens: this.options.tokens === true,
          }),
        ) + '\n';
    });
    this.records += steps.length;
    this.stream.write(chunk);
  }

  /** Closes the file when the stream fails (the trace keeps every closed group). */
  error(): void {
    void this.close().catch(() => undefined);
  }

  /** Closes the file when the stream completes. */
  complete(): void {
    void this.close().catch(() => undefined);
  }

  /** Closes the file when the subscription ends for any reason (tap's `finalize`). */
  finalize(): void {
    void this.close().catch(() => undefined);
  }

  /** Flushes and closes the file; resolves when it is closed, rejects if writing failed. Idempotent. */
  async close(): Promise<void> {
    if (!this.ending) {
      this.ending = true;
      this.stream.end();
    }
    await this.finished;
    if (this.streamError)
      throw new Error(`Trace file ${this.path}: ${this.streamError.message}`, { cause: this.streamError });
  }
}
