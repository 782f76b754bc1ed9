/**
 * `math-v0`: a coder (tool agent) and a solver answer a math problem together.
 *
 * Each turn the coder writes a program (run in the sandbox; its LAST printed line is its answer), then the solver
 * gives an answer (the content of its last `\boxed{}`). Every seat sees the whole history of both. The episode ends
 * when the two answers agree (by the checker) or after `maxTurns` turns. Success = the solver's answer is correct.
 * With `seats: ['solver']` it is the single-agent baseline: the episode ends at the solver's first readable answer.
 */
import { toolDetailsOf, toolDetailsText, type ToolDetails } from '@troupe/game-kit';
import {
  DerivedRandomStreams,
  shuffled,
  splitOfContent,
  type Logger,
  type RandomStreams,
  type SandboxPool,
  type ActionTypeSpec,
  type Environment,
  type Move,
  type Observation,
  type Rng,
  type SeatSpec,
  type Split,
  type SplitFractions,
  type StepResult,
} from '@troupe/kernel';
import type { EquivalenceOptions, EquivalenceResult } from './checker/equivalence.js';
import { extractProgramAnswer } from './checker/extract.js';
import { extractAnswer, stripUnit, type ExtractionMode } from './checker/response.js';
import { MathVerifier, sharedVerifier } from './checker/verifier.js';
import { GeneratedProblemSet, problemKey } from './problems/generated-set.js';
import { loadDatasetSync, type DatasetOptions } from './problems/loaders.js';
import { FAMILIES, type Family, type MathProblem } from './problems/types.js';
import { sharedSandboxPool } from '@troupe/sandbox';
import { type SandboxLike, type SandboxLimitsLike, type SandboxOptionsLike, type SandboxRunResult } from './sandbox.js';

/** The environment id. */
export const MATH_ENV_ID = 'math-v0';

/** The coder's action: a program whose last printed line is its answer. */
export interface ProgramAction {
  readonly language: 'python' | 'javascript';
  readonly source: string;
}

/** The solver's action: its final answer (the content of its last `\boxed{}`). */
export interface AnswerAction {
  readonly answer: string;
}

/** Any action of this environment. */
export type MathAction = ProgramAction | AnswerAction;

/** Seat names. */
export type MathSeat = 'coder' | 'solver';

/** Where instances come from when a dataset file is used. */
export type DatasetSplitMode = 'hash' | 'all' | Split;

/** Config of `math-v0` (see schemas/math.config.json; defaults are filled by the kernel or by the constructor). */
export interface MathConfig {
  /** Turns T (default 3). */
  readonly maxTurns: number;
  /** Seats in turn order: `['coder', 'solver']` (default) or `['solver']` (single-agent baseline). */
  readonly seats: readonly MathSeat[];
  /** Families of the generated set (default: all). Ignored when `dataset` is set. */
  readonly families: readonly Family[];
  /** Split fractions of the content-hash space (default 80/10/10). */
  readonly splitFractions?: SplitFractions;
  /** A local dataset file instead of generated problems. */
  readonly dataset?: DatasetOptions & {
    /** `hash` (default): rows go to the split their content hashes into; `all`: every split is the whole file; a split name: the file is that split only. */
    readonly split?: DatasetSplitMode;
  };
  /** Options of the answer checker (`budgetMs`: the time budget of one check, default 1000; `threads`: verifier workers, default 1). */
  readonly checker?: EquivalenceOptions & { readonly threads?: number };
  /**
   * How the solver's answer is read from its text: `boxed` (default: its last `\boxed{}`, or a bare answer) or
   * `lenient` (also "the final answer is …", the last math span, the last number). `<think>` blocks are always dropped.
   */
  readonly extraction?: ExtractionMode;
  /** Options of the sandbox the environment creates when none is injected, plus per-run limits. */
  readonly sandbox?: SandboxOptionsLike & { readonly limits?: Partial<SandboxLimitsLike> };
  /** At most this many characters of program output are shown to the seats (default 2000). */
  readonly outputChars?: number;
}

/**
 * The signals every step returns (map them in the team spec with the `signals-v0` reward):
 * `solver_correct` — 1 when the latest solver answer is correct, else 0 (at a coder step: the previous turn's);
 * `coder_reward` — the coder's program this turn: 1 correct, 0 wrong or silent, −1 crash, timeout or unreadable;
 * `team` — equals `solver_correct` (the paper's team term);
 * `answer_undecided` — 1 when the answer graded at this step could not be decided within the checker's time budget or
 * size guards (it then counts as wrong), else 0.
 */
export const MATH_SIGNALS: readonly string[] = Object.freeze([
  'solver_correct',
  'coder_reward',
  'team',
  'answer_undecided',
]);

/** Defaults of {@link MathConfig}. */
export const DEFAULT_MATH_CONFIG: MathConfig = { maxTurns: 3, seats: ['coder', 'solver'], families: FAMILIES };

/** One entry of the shared history. */
export type HistoryEntry =
  | {
      readonly seat: 'coder';
      readonly turn: number;
      /** The program (absent when the text did not parse). */
      readonly program?: ProgramAction;
      /** Why the coder's text did not parse. */
      readonly error?: string;
      /** Sandbox verdict, exit code and (truncated) output. */
      readonly run?: {
        readonly verdict: string;
        readonly exitCode: number | null;
        readonly stdout: string;
        readonly stderr: string;
        readonly truncated: boolean;
      };
      /** The last printed line, or null. */
      readonly answer: string | null;
      /** 1 correct, 0 wrong, −1 crash/timeout/unparseable. */
      readonly reward: -1 | 0 | 1;
      /** Whether the checker could not decide (budget or size guards); such an answer counts as wrong. */
      readonly undecided?: boolean;
      /** Whether `answer` equals the reference (never shown to the seats). */
      readonly correct: boolean;
    }
  | {
      readonly seat: 'solver';
      readonly turn: number;
      /** The boxed answer, or null when the text had none. */
      readonly answer: string | null;
      /** Why the solver's text did not parse. */
      readonly error?: string;
      /** The program and output, when a tool-using role (the coder in program-output mode) played the solver seat. */
      readonly tool?: ToolDetails;
      /** Whether `answer` equals the reference (never shown to the seats). */
      readonly correct: boolean;
      /** Where the answer was read from (the extraction step: boxed, final-answer, bare, math-span, last-number). */
      readonly source?: string;
      /** Whether the checker could not decide (budget or size guards); such an answer counts as wrong. */
      readonly undecided?: boolean;
    };

/** The state: an immutable value. */
export interface MathState {
  /** The problem. */
  readonly problem: MathProblem;
  /** Current turn (0-based). */
  readonly turn: number;
  /** Index (in `seats`) of the seat to act next. */
  readonly seatIndex: number;
  /** Everything both seats did, in order. */
  readonly history: readonly HistoryEntry[];
  /** Whether the episode is over. */
  readonly done: boolean;
  /** Whether the latest solver answer is correct. */
  readonly success: boolean;
}

/** Dependencies a host (or a test) can inject. */
export interface MathEnvironmentDeps {
  /** The runner of the coder's programs (a test's fake); default: the pool's runner with `config.sandbox`. */
  readonly sandbox?: SandboxLike;
  /** The process's sandbox pool (default: `sharedSandboxPool()` of `@troupe/sandbox`). */
  readonly pool?: SandboxPool;
  /** Where the seeded orders of a fixed dataset come from (default: `deriveSeed`-named streams, as always). */
  readonly random?: RandomStreams;
  /** Where it reports what the coder's runs did (default: none). */
  readonly logger?: Logger;
  /** Problems to use instead of the generated set or a dataset file (split by content hash). */
  readonly problems?: readonly MathProblem[];
}

const ACTION_TYPES: readonly ActionTypeSpec[] = [
  {
    name: 'program',
    description: 'A complete program; its LAST printed line is the answer.',
    schema: {
      type: 'object',
      required: ['language', 'source'],
      additionalProperties: false,
      properties: { language: { enum: ['python', 'javascript'] }, source: { type: 'string', minLength: 1 } },
    },
  },
  {
    name: 'answer',
    description: 'The final answer: the content of the last \\boxed{}.',
    schema: {
      type: 'object',
      required: ['answer'],
      additionalProperties: false,
      properties: { answer: { type: 'string' } },
    },
  },
];

const SEAT_SPECS: Readonly<Record<MathSeat, SeatSpec>> = {
  coder: {
    name: 'coder',
    actionType: 'program',
    description: 'Tool agent: writes a program whose last printed line is the answer; it runs in the sandbox.',
  },
  solver: {
    name: 'solver',
    actionType: 'answer',
    description: 'Reasons about the problem (and the program output) and gives the final answer in \\boxed{}.',
  },
};

/** Shortens text to its last `max` characters. */
function tail(text: string, max: number): string {
  return text.length <= max ? text : `…${text.slice(text.length - max)}`;
}

/** A Python string literal for any text (JSON string syntax is valid Python). */
export function pythonStringLiteral(text: string): string {
  return JSON.stringify(text);
}

/** The math environment. Pure over immutable states except for running programs in the sandbox. */
export class MathEnvironment implements Environment<MathProblem, MathState, MathAction> {
  readonly id = MATH_ENV_ID;
  readonly seats: readonly SeatSpec[];
  readonly actionTypes: readonly ActionTypeSpec[];
  readonly maxTurns: number;
  /** {@inheritDoc Environment.signals} */
  readonly signals = MATH_SIGNALS;
  /** The resolved config. */
  readonly config: MathConfig;
  private readonly generated?: GeneratedProblemSet;
  private readonly fixed?: { readonly bySplit: Record<Split, readonly MathProblem[]> };
  private sandbox?: SandboxLike;
  private readonly deps: MathEnvironmentDeps;
  private verifier?: MathVerifier;

  /** Builds the environment. Throws a clear error for a bad config or an unreadable dataset. */
  constructor(config: Partial<MathConfig> = {}, deps: MathEnvironmentDeps = {}) {
    this.config = { ...DEFAULT_MATH_CONFIG, ...config };
    const seats = this.config.seats;
    if (
      !(seats.length === 2 && seats[0] === 'coder' && seats[1] === 'solver') &&
      !(seats.length === 1 && seats[0] === 'solver')
    ) {
      throw new Error(`math-v0: config.seats must be ["coder", "solver"] or ["solver"], got ${JSON.stringify(seats)}`);
    }
    if (!Number.isInteger(this.config.maxTurns) || this.config.maxTurns < 1) {
      throw new Error(`math-v0: config.maxTurns must be a positive integer, got ${this.config.maxTurns}`);
    }
    this.seats = seats.map((s) => SEAT_SPECS[s]);
    this.actionTypes = seats.length === 2 ? ACTION_TYPES : ACTION_TYPES.filter((t) => t.name === 'answer');
    this.maxTurns = this.config.maxTurns;
    this.sandbox = deps.sandbox;
    this.deps = deps;
    if (deps.problems) {
      this.fixed = { bySplit: this.splitProblems(deps.problems, 'hash') };
    } else if (this.config.dataset) {
      this.fixed = {
        bySplit: this.splitProblems(loadDatasetSync(this.config.dataset), this.config.dataset.split ?? 'hash'),
      };
    } else {
      this.generated = new GeneratedProblemSet({
        families: this.config.families,
        splitFractions: this.config.splitFractions,
      });
    }
  }

  /** Assigns fixed problems to splits. */
  private splitProblems(
    problems: readonly MathProblem[],
    mode: DatasetSplitMode,
  ): Record<Split, readonly MathProblem[]> {
    const bySplit: Record<Split, MathProblem[]> = { train: [], validation: [], test: [] };
    const seen = new Set<string>();
    for (const p of problems) {
      const key = problemKey(p);
      if (seen.has(key)) continue;
      seen.add(key);
      if (mode === 'all') {
        bySplit.train.push(p);
        bySplit.validation.push(p);
        bySplit.test.push(p);
      } else if (mode === 'hash') bySplit[splitOfContent(key, this.config.splitFractions)].push(p);
      else bySplit[mode].push(p);
    }
    return bySplit;
  }

  /**
   * The `index`-th problem of `split` for `seed`. Generated problems never repeat; a fixed dataset is shuffled per
   * (seed, split) and indices wrap around its size.
   */
  instance(split: Split, index: number, seed: number): MathProblem {
    if (this.generated) return this.generated.get(split, index, seed);
    const rows = this.fixed!.bySplit[split];
    if (rows.length === 0) {
      const where = this.config.dataset
        ? `dataset ${this.config.dataset.path} (split mode ${this.config.dataset.split ?? 'hash'})`
        : 'the injected problems';
      throw new Error(`math-v0: the ${split} split of ${where} is empty`);
    }
    const order = shuffled(
      rows.map((_, k) => k),
      (this.deps.random ?? new DerivedRandomStreams()).stream(seed, MATH_ENV_ID, split),
    );
    return rows[order[index % rows.length]!]!;
  }

  /** The content hash of the problem's statement and answer. */
  instanceKey(instance: MathProblem): string {
    return problemKey(instance);
  }

  /** The problem as JSON (for `troupe env sample`). */
  describe(instance: MathProblem): Record<string, unknown> {
    return { ...instance, key: problemKey(instance) };
  }

  /** The initial state. */
  reset(instance: MathProblem): MathState {
    return { problem: instance, turn: 0, seatIndex: 0, history: [], done: false, success: false };
  }

  /** What `seat` sees: the problem, the turn, and both seats' history (never the reference or any verdict). */
  observe(state: MathState, seat: string): Observation {
    const spec = this.requireSeat(seat);
    const team =
      this.seats.length === 2
        ? 'You are on a two-member team: a coder writes a program whose last printed line is the answer, and a solver reasons and gives the final answer. ' +
          "The episode ends when the program's answer and the solver's answer agree, or after the last turn."
        : 'Solve the problem and give the final answer.';
    const task = `${team}\n\nProblem:\n${state.problem.question}`;
    const stateText = `Turn ${Math.min(state.turn, this.maxTurns - 1) + 1} of ${this.maxTurns}. You are the ${spec.name}. ${spec.description}`;
    const max = this.config.outputChars ?? 2000;
    const context: { label: string; text: string }[] = [];
    for (const entry of state.history) {
      const t = entry.turn + 1;
      if (entry.seat === 'coder') {
        if (!entry.program) {
          context.push({
            label: `Coder (turn ${t})`,
            text: `No program could be read: ${entry.error ?? 'unknown error'}`,
          });
          continue;
        }
        context.push({
          label: `Coder's program (turn ${t})`,
          text: `\`\`\`${entry.program.language}\n${entry.program.source.trimEnd()}\n\`\`\``,
        });
        const run = entry.run!;
        const lines = [`Verdict: ${run.verdict}, exit code ${run.exitCode ?? 'none'}.`];
        lines.push(
          run.stdout.trim() === ''
            ? 'It printed nothing.'
            : `Output${run.truncated ? ' (truncated)' : ''}:\n${tail(run.stdout.trimEnd(), max)}`,
        );
        if (run.exitCode !== 0 && run.stderr.trim() !== '') lines.push(`Errors:\n${tail(run.stderr.trimEnd(), max)}`);
        lines.push(
          entry.answer === null
            ? 'No answer (nothing printed).'
            : `Program's answer (last printed line): ${entry.answer}`,
        );
        context.push({ label: `Program output (turn ${t})`, text: lines.join('\n') });
      } else {
        if (entry.tool) context.push({ label: `Solver's program (turn ${t})`, text: toolDetailsText(entry.tool) });
        context.push({
          label: `Solver's answer (turn ${t})`,
          text:
            entry.answer === null
              ? `No \\boxed{} answer: ${entry.error ?? 'unknown error'}`
              : `\\boxed{${entry.answer}}`,
        });
      }
    }
    const history = state.history.map((e) =>
      e.seat === 'coder'
        ? { seat: e.seat, turn: e.turn, answer: e.answer, verdict: e.run?.verdict ?? 'unparseable' }
        : { seat: e.seat, turn: e.turn, answer: e.answer },
    );
    return { task, state: stateText, context, turn: state.turn, data: { seat: spec.name, history } };
  }

  /** Applies a seat's move. Runs the coder's program in the sandbox. Never mutates `state`. */
  async step(state: MathState, seat: string, move: Move<MathAction>): Promise<StepResult<MathState>> {
    this.requireSeat(seat);
    if (state.done) throw new Error(`math-v0: step called on a finished episode (seat ${seat})`);
    const expected = this.seats[state.seatIndex]!.name;
    if (seat !== expected)
      throw new Error(`math-v0: it is the ${expected}'s move, not the ${seat}'s (turn ${state.turn})`);
    return seat === 'coder' ? this.stepCoder(state, move) : this.stepSolver(state, move);
  }

  /**
   * Checks a pair with the verifier: the process-wide one, or this environment's own when `checker.threads` is set
   * (created on first use; worker threads start only when a pair needs the symbolic layers).
   */
  private check(answer: string, reference: string): Promise<EquivalenceResult> {
    const { threads, ...options } = this.config.checker ?? {};
    if (threads !== undefined) this.verifier ??= new MathVerifier({ threads });
    return (this.verifier ?? sharedVerifier()).check(answer, reference, options);
  }

  /** Whether `answer` is the reference answer (a unit the problem names is dropped from the answer first). */
  private async isCorrect(
    answer: string | null,
    problem: MathProblem,
  ): Promise<{ correct: boolean; undecided: boolean; layer: string; details: string }> {
    if (answer === null) return { correct: false, undecided: false, layer: 'none', details: 'no answer' };
    const r = await this.check(problem.unit ? stripUnit(answer, problem.unit) : answer, problem.answer);
    return { correct: r.equivalent, undecided: r.verdict === 'undecided', layer: r.layer, details: r.details };
  }

  /** The latest solver entry, if any. */
  private lastSolver(state: MathState): Extract<HistoryEntry, { seat: 'solver' }> | undefined {
    for (let k = state.history.length - 1; k >= 0; k--) {
      const e = state.history[k]!;
      if (e.seat === 'solver') return e;
    }
    return undefined;
  }

  /** The coder entry of `turn`, if any. */
  private coderOf(state: MathState, turn: number): Extract<HistoryEntry, { seat: 'coder' }> | undefined {
    return state.history.find(
      (e): e is Extract<HistoryEntry, { seat: 'coder' }> => e.seat === 'coder' && e.turn === turn,
    );
  }

  /** The runner of the coder's programs: the injected one, else the pool's runner with `config.sandbox`. */
  private getSandbox(): SandboxLike {
    if (!this.sandbox) {
      const { limits: _limits, ...settings } = this.config.sandbox ?? {};
      this.sandbox = (this.deps.pool ?? sharedSandboxPool()).runner(settings);
    }
    return this.sandbox;
  }

  /** Stops this environment's own verifier workers (the sandbox belongs to the process's pool, which its host closes). */
  async dispose(): Promise<void> {
    const verifier = this.verifier;
    this.verifier = undefined;
    await verifier?.close();
  }

  /** The coder's step: parse, run, read the last printed line, grade. */
  private async stepCoder(state: MathState, move: Move<MathAction>): Promise<StepResult<MathState>> {
    let entry: Extract<HistoryEntry, { seat: 'coder' }>;
    let info: Record<string, unknown>;
    const program = move.kind === 'action' ? validateProgram(move.action) : undefined;
    if (move.kind === 'invalid' || typeof program === 'string') {
      const error = move.kind === 'invalid' ? move.error : (program as string);
      entry = { seat: 'coder', turn: state.turn, error, answer: null, reward: -1, correct: false };
      info = { error };
    } else {
      const action = program as ProgramAction;
      const sandbox = this.getSandbox();
      const { limits } = this.config.sandbox ?? {};
      const result: SandboxRunResult = await sandbox.run({
        language: action.language,
        source: action.source,
        ...(limits ? { limits } : {}),
      });
      if (result.verdict === 'refused') {
        throw new Error(
          `math-v0: the sandbox refused to run the coder's program (${result.reason ?? 'no isolation available'}). ` +
            'Install bubblewrap or run as root for unshare, or set environment.config.sandbox.allowUnisolated: true to run without isolation.',
        );
      }
      // The exit code decides: warnings on stderr are not failures.
      const crashed = result.verdict !== 'ok' || result.exitCode !== 0;
      const answer = crashed ? null : (extractProgramAnswer(result.stdout) ?? null);
      const grade = await this.isCorrect(answer, state.problem);
      const reward: -1 | 0 | 1 = crashed ? -1 : grade.correct ? 1 : 0;
      const max = Math.max(4000, this.config.outputChars ?? 2000);
      entry = {
        seat: 'coder',
        turn: state.turn,
        program: { language: action.language, source: action.source },
        run: {
          verdict: result.verdict,
          exitCode: result.exitCode,
          stdout: tail(result.stdout, max),
          stderr: tail(result.stderr, max),
          truncated: Boolean(result.truncated),
        },
        answer,
        reward,
        correct: grade.correct,
        ...(grade.undecided ? { undecided: true } : {}),
      };
      info = {
        verdict: result.verdict,
        exitCode: result.exitCode,
        answer,
        layer: grade.layer,
        details: grade.details,
        undecided: grade.undecided,
        isolation: result.isolation,
      };
      this.deps.logger?.debug('coder program ran', {
        verdict: result.verdict,
        answer,
        correct: grade.correct,
        layer: grade.layer,
      });
    }
    const next: MathState = { ...state, seatIndex: state.seatIndex + 1, history: [...state.history, entry] };
    const solverCorrect = this.lastSolver(state)?.correct ? 1 : 0;
    return {
      state: next,
      done: { terminated: false, truncated: false },
      success: state.success,
      signals: {
        coder_reward: entry.reward,
        solver_correct: solverCorrect,
        team: solverCorrect,
        answer_undecided: entry.undecided ? 1 : 0,
      },
      info: { seat: 'coder', reference: state.problem.answer, ...info },
    };
  }

  /**
   * The solver's answer, read by the shared extraction step (see checker/response.ts): from the role's `{ answer }`
   * (solver-v0 already took the last `\boxed{}`; its raw text is re-read so that `<think>` blocks are dropped first),
   * from a bare string (a tool-using role's printed answer), or, in `lenient` mode, from the raw text of a reply the
   * role could not parse (no `\boxed{}`).
   */
  private readSolverAnswer(move: Move<MathAction>): { answer: string | null; source?: string; error?: string } {
    const mode = this.config.extraction ?? 'boxed';
    if (move.kind === 'invalid') {
      const found = mode === 'lenient' && move.text ? extractAnswer(move.text, mode) : undefined;
      return found ? { answer: found.answer.trim(), source: found.source } : { answer: null, error: move.error };
    }
    const a = move.action as Partial<AnswerAction> | string;
    if (typeof a === 'string') {
      const found = extractAnswer(a, mode);
      return found
        ? { answer: found.answer.trim(), source: found.source }
        : { answer: null, error: `no answer could be read from ${JSON.stringify(a.slice(0, 80))}` };
    }
    const text = a?.answer;
    if (typeof text !== 'string' || text.trim() === '')
      return { answer: null, error: 'the answer action has no non-empty "answer" string' };
    if (move.text && /<\/?think>/i.test(move.text)) {
      // The role's box may sit inside the reasoning: read the text again without it.
      const reread = extractAnswer(move.text, mode);
      return reread
        ? { answer: reread.answer.trim(), source: reread.source }
        : { answer: null, error: 'no answer after the <think> block' };
    }
    return { answer: text.trim(), source: 'boxed' };
  }

  /** The solver's step: grade the answer, check agreement with this turn's program answer, advance the turn. */
  private async stepSolver(state: MathState, move: Move<MathAction>): Promise<StepResult<MathState>> {
    const { answer, source, error } = this.readSolverAnswer(move);
    const grade = await this.isCorrect(answer, state.problem);
    const tool = toolDetailsOf(move.details);
    const entry: HistoryEntry = {
      seat: 'solver',
      turn: state.turn,
      answer,
      correct: grade.correct,
      ...(source ? { source } : {}),
      ...(grade.undecided ? { undecided: true } : {}),
      ...(error ? { error } : {}),
      ...(tool ? { tool } : {}),
    };
    const coder = this.coderOf(state, state.turn);
    let agree = false;
    let agreement: string | undefined;
    if (this.seats.length === 2) {
      if (answer !== null && coder?.answer) {
        const r = await this.check(answer, coder.answer);
        agree = r.equivalent;
        agreement = r.details;
      }
    }
    const terminated = this.seats.length === 2 ? agree : answer !== null;
    const truncated = !terminated && state.turn + 1 >= this.maxTurns;
    const done = terminated || truncated;
    const next: MathState = {
      ...state,
      history: [...state.history, entry],
      success: grade.correct,
      done,
      turn: done ? state.turn : state.turn + 1,
      seatIndex: done ? state.seatIndex : 0,
    };
    const correct = grade.correct ? 1 : 0;
    return {
      state: next,
      done: { terminated, truncated },
      success: grade.correct,
      signals: {
        solver_correct: correct,
        team: correct,
        coder_reward: coder?.reward ?? 0,
        answer_undecided: grade.undecided ? 1 : 0,
      },
      info: {
        seat: 'solver',
        answer,
        ...(source ? { source } : {}),
        reference: state.problem.answer,
        layer: grade.layer,
        details: grade.details,
        undecided: grade.undecided,
        agree,
        ...(agreement ? { agreement } : {}),
        ...(error ? { error } : {}),
      },
    };
  }

  /** An optimal action: the coder prints the answer (with the problem's own program when it has one); the solver states it. */
  oracle(state: MathState, seat: string): MathAction {
    this.requireSeat(seat);
    if (seat === 'coder')
      return {
        language: 'python',
        source: state.problem.program ?? `print(${pythonStringLiteral(state.problem.answer)})\n`,
      };
    return { answer: state.problem.answer };
  }

  /** A random small integer answer (0–20), or a program printing one. */
  randomAction(_state: MathState, seat: string, rng: Rng): MathAction {
    this.requireSeat(seat);
    const n = rng.int(21);
    return seat === 'coder' ? { language: 'python', source: `print(${n})\n` } : { answer: String(n) };
  }

  /** Throws for a seat this environment does not have. */
  private requireSeat(seat: string): SeatSpec {
    const spec = this.seats.find((s) => s.name === seat);
    if (!spec) throw new Error(`math-v0: unknown seat "${seat}" (seats: ${this.seats.map((s) => s.name).join(', ')})`);
    return spec;
  }
}

/** Checks a program action's shape; returns the action or a reason string. */
function validateProgram(action: unknown): ProgramAction | string {
  const a = action as Partial<ProgramAction> | undefined;
  if (!a || typeof a !== 'object') return 'the program action is not an object';
  if (a.language !== 'python' && a.language !== 'javascript')
    return `unsupported program language ${JSON.stringify(a.language)} (python or javascript)`;
  if (typeof a.source !== 'string' || a.source.trim() === '') return 'the program is empty';
  return { language: a.language, source: a.source };
}
