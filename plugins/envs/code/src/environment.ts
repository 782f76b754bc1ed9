/**
 * `code-v0`: stdin/stdout programming problems for a coder/tester team (or a single coder).
 *
 * Each turn the coder writes a program, then the tester writes unit tests; the program runs on the tests in the
 * sandbox and the failures are shown to both seats in the next turn. The episode ends when the program passes all of
 * the tester's tests (at least one), or after T turns. Rewards are reported as signals (see the README).
 */
import {
  DerivedRandomStreams,
  injectable,
  injectParameters,
  Logger,
  optionalService,
  RandomStreams,
  SandboxPool,
  shuffled,
  type ActionTypeSpec,
  type Environment,
  type EnvironmentContribution,
  type JsonSchema,
  type Move,
  type Observation,
  type Rng,
  type SeatSpec,
  type Split,
  type StepResult,
} from '@troupe/kernel';
import { sharedSandboxPool } from '@troupe/sandbox';
import { CODE_CONFIG_SCHEMA, resolveConfig, type CodeEnvConfig, type CodeSeat } from './config.js';
import { problemKey, problemsBySplit, type ProblemsBySplit } from './dataset.js';
import { headOf, SHOWN_OUTPUT_CHARS, TestRunner, type SandboxLike } from './runner.js';
import {
  LANGUAGES,
  type CodeInstance,
  type CodeProblem,
  type CodeState,
  type IoTest,
  type ProgramAction,
  type TestOutcome,
  type UnitTestsAction,
} from './types.js';

/** The environment id. */
export const CODE_ENV_ID = 'code-v0';

/** Longest program source accepted (characters); longer programs are invalid moves. */
export const MAX_SOURCE_CHARS = 100_000;
/** Longest test input or output accepted (characters); longer tests are dropped. */
export const MAX_TEST_CHARS = 20_000;

/** JSON schema of the `program` action. */
export const PROGRAM_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['language', 'source'],
  properties: { language: { enum: [...LANGUAGES] }, source: { type: 'string', minLength: 1 } },
};

/** JSON schema of the `unit-tests` action. */
export const UNIT_TESTS_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['tests'],
  properties: {
    tests: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['input', 'output'],
        properties: { input: { type: 'string' }, output: { type: 'string' } },
      },
    },
  },
};

/** The action types of the code environment. */
export const CODE_ACTION_TYPES: readonly ActionTypeSpec[] = Object.freeze([
  {
    name: 'program',
    schema: PROGRAM_SCHEMA,
    description: 'A complete program (python or javascript) that reads stdin and writes stdout.',
  },
  {
    name: 'unit-tests',
    schema: UNIT_TESTS_SCHEMA,
    description: 'Unit tests: a list of {input, output}; output is the exact expected stdout.',
  },
]);

const SEAT_SPECS: Record<CodeSeat, SeatSpec> = {
  coder: {
    name: 'coder',
    actionType: 'program',
    description: 'Writes a complete program that reads stdin and prints the answer.',
  },
  tester: {
    name: 'tester',
    actionType: 'unit-tests',
    description: 'Writes unit tests (input, expected output) for the problem.',
  },
};

/** The names of the signals every step reports (all present, all finite). */
export const CODE_SIGNALS = [
  'coder_pass_rate',
  'team',
  'tester_reference_pass_rate',
  'tester_discrimination',
  'tester_reward',
  'tests_pass_rate',
  'valid',
  'program_correct',
  'success',
] as const;

/** What the environment runs programs with and draws instance orders from. */
export interface CodeEnvironmentOptions {
  /** The runner of its programs (a test's fake); default: the pool's runner with `config.sandbox`. */
  readonly sandbox?: SandboxLike;
  /** The process's sandbox pool (default: `sharedSandboxPool()` of `@troupe/sandbox`). */
  readonly pool?: SandboxPool;
  /** Where the seeded instance orders come from (default: `deriveSeed`-named streams, as always). */
  readonly random?: RandomStreams;
  /** Where it reports refused runs (default: none). */
  readonly logger?: Logger;
}

/** The code environment. States are frozen values; `step` returns new ones. */
export class CodeEnvironment implements Environment<CodeInstance, CodeState, ProgramAction | UnitTestsAction> {
  /** @inheritdoc */
  readonly id = CODE_ENV_ID;
  /** @inheritdoc */
  readonly seats: readonly SeatSpec[];
  /** @inheritdoc */
  readonly actionTypes: readonly ActionTypeSpec[];
  /** @inheritdoc */
  readonly maxTurns: number;
  /** The resolved config. */
  readonly config: CodeEnvConfig;
  /** Problems of each split. */
  readonly problems: ProblemsBySplit;
  private readonly runner: TestRunner;
  private sandbox: SandboxLike | undefined;
  private readonly random: RandomStreams;

  /**
   * @param config raw or resolved config (defaults are filled in)
   * @param options the sandbox pool (or a runner), random streams and logger
   */
  constructor(config: Record<string, unknown> = {}, options: CodeEnvironmentOptions = {}) {
    this.config = resolveConfig(config);
    this.seats = Object.freeze(this.config.seats.map((s) => SEAT_SPECS[s]));
    this.actionTypes = this.config.seats.length === 1 ? Object.freeze([CODE_ACTION_TYPES[0]!]) : CODE_ACTION_TYPES;
    this.maxTurns = this.config.maxTurns;
    this.problems = problemsBySplit(this.config);
    this.sandbox = options.sandbox;
    this.random = options.random ?? new DerivedRandomStreams();
    this.runner = new TestRunner(
      () => (this.sandbox ??= (options.pool ?? sharedSandboxPool()).runner({ ...this.config.sandbox })),
      this.config.limits,
      this.config.cacheSize,
      options.logger,
    );
  }

  /** @inheritdoc */
  instance(split: Split, index: number, seed: number): CodeInstance {
    const list = this.problems[split];
    if (!list || list.length === 0) {
      throw new Error(
        `code-v0: the ${split} split has no problems (${this.problemSummary()}); add problems or change splitFractions / dataset split settings`,
      );
    }
    if (!Number.isInteger(index) || index < 0)
      throw new RangeError(`code-v0: instance index must be a non-negative integer, got ${index}`);
    const epoch = Math.floor(index / list.length);
    const order = shuffled([...list.keys()], this.random.stream(seed, 'code-v0', split, epoch));
    return Object.freeze({ problem: list[order[index % list.length]!]!, split });
  }

  /** @inheritdoc */
  instanceKey(instance: CodeInstance): string {
    return problemKey(instance.problem);
  }

  /** @inheritdoc */
  describe(instance: CodeInstance): Record<string, unknown> {
    const p = instance.problem;
    return {
      id: p.id,
      split: instance.split,
      question: p.question,
      goldenTests: p.tests.length,
      scoredGoldenTests: this.scoredTests(instance).length,
      hasReference: p.reference !== null,
      tolerance: this.toleranceOf(p),
      origin: p.origin ?? null,
    };
  }

  /** @inheritdoc */
  reset(instance: CodeInstance): CodeState {
    return Object.freeze({
      instance,
      turn: 0,
      seatIndex: 0,
      program: null,
      programTurn: null,
      programError: null,
      golden: Object.freeze({ passed: 0, total: this.scoredTests(instance).length }),
      tests: Object.freeze([]),
      testsTurn: null,
      testsError: null,
      testsValid: Object.freeze([]),
      report: Object.freeze([]),
      done: false,
      success: false,
    });
  }

  /** The golden tests that are scored for an instance (capped on the train split, see the config). */
  scoredTests(instance: CodeInstance): readonly IoTest[] {
    const cap = instance.split === 'train' ? this.config.maxGoldenTests : this.config.maxGoldenTestsEval;
    return cap === null ? instance.problem.tests : instance.problem.tests.slice(0, cap);
  }

  /** @inheritdoc */
  observe(state: CodeState, seat: string): Observation {
    const s = this.seatOf(seat);
    const problem = state.instance.problem;
    const single = this.seats.length === 1;
    const task =
      s === 'coder'
        ? single
          ? `Solve the programming problem below. Write a complete program (Python, or JavaScript for Node.js) that reads the input from standard input and prints the answer to standard output. Your program is judged on hidden tests.\n\nProblem:\n${problem.question}`
          : `You are the coder of a team. Write a complete program (Python, or JavaScript for Node.js) that reads the input from standard input and prints the answer to standard output, for the problem below. A tester writes unit tests; your program is run on them and the failures are shown to you in the next turn. Your program is finally judged on hidden tests.\n\nProblem:\n${problem.question}`
        : `You are the tester of a team. Write unit tests for the problem below: each test is an input for standard input and the exact output a correct program prints. Your tests must be correct for the problem statement; good tests also catch the mistakes in the coder's program. The program is run on your tests and the failures are shown to both of you in the next turn.\n\nProblem:\n${problem.question}`;
    const lines = [`Turn ${state.turn + 1} of ${this.maxTurns}.`];
    if (state.program)
      lines.push(`Program: written by the coder in turn ${state.programTurn! + 1} (${state.program.language}).`);
    else if (state.programError !== null)
      lines.push(
        `Program: none; the coder's output in turn ${state.programTurn! + 1} could not be used: ${state.programError}`,
      );
    else lines.push('Program: none yet.');
    if (!single) {
      if (state.tests.length > 0)
        lines.push(`Unit tests: ${state.tests.length} from the tester in turn ${state.testsTurn! + 1}.`);
      else if (state.testsError !== null)
        lines.push(
          `Unit tests: none; the tester's output in turn ${state.testsTurn! + 1} could not be used: ${state.testsError}`,
        );
      else lines.push('Unit tests: none yet.');
      if (state.program && state.report.length > 0) {
        const passed = state.report.filter((o) => o.passed).length;
        lines.push(
          passed === state.report.length
            ? `Results: the program passes all ${passed} unit tests.`
            : `Results: the program passes ${passed} of ${state.report.length} unit tests.`,
        );
      }
    }
    const context: { label: string; text: string }[] = [];
    if (state.program)
      context.push({
        label: `Current program (coder, turn ${state.programTurn! + 1})`,
        text: renderProgram(state.program),
      });
    if (state.tests.length > 0)
      context.push({
        label: `Current unit tests (tester, turn ${state.testsTurn! + 1})`,
        text: renderTests(state.tests),
      });
    const failures = state.report.map((o, i) => ({ o, i })).filter(({ o }) => !o.passed);
    if (state.program && failures.length > 0 && this.config.maxShownFailures > 0) {
      const shown = failures.slice(0, this.config.maxShownFailures).map(({ o, i }) => renderFailure(o, i));
      const more = failures.length - shown.length;
      context.push({
        label: 'Failing unit tests',
        text: shown.join('\n\n') + (more > 0 ? `\n\n(${more} more failing tests not shown)` : ''),
      });
    }
    return Object.freeze({
      task,
      state: lines.join('\n'),
      context: Object.freeze(context),
      turn: state.turn,
      data: Object.freeze({
        problemId: problem.id,
        seat: s,
        program: state.program,
        tests: state.tests,
        failures: failures.map(({ o, i }) => ({
          index: i,
          input: o.input,
          expected: o.expected,
          got: o.got,
          verdict: o.verdict,
          exitCode: o.exitCode,
          stderr: o.stderr,
        })),
      }),
    });
  }

  /** @inheritdoc */
  async step(
    state: CodeState,
    seat: string,
    move: Move<ProgramAction | UnitTestsAction>,
  ): Promise<StepResult<CodeState>> {
    const s = this.seatOf(seat);
    if (state.done) throw new Error(`code-v0: the episode is over; step() was called for seat ${seat}`);
    const expected = this.seats[state.seatIndex]!.name;
    if (s !== expected) throw new Error(`code-v0: it is the ${expected}'s turn, not the ${seat}'s`);
    return s === 'coder' ? this.stepCoder(state, move) : this.stepTester(state, move);
  }

  private async stepCoder(state: CodeState, move: Move<unknown>): Promise<StepResult<CodeState>> {
    const { program, error } = programOf(move);
    const golden = this.scoredTests(state.instance);
    const tolerance = this.toleranceOf(state.instance.problem);
    const jobs = program
      ? [
          { program, tests: golden, tolerance },
          ...(state.tests.length > 0 ? [{ program, tests: state.tests, tolerance }] : []),
        ]
      : [];
    const outcomes = await this.runner.run(jobs);
    const passed = program ? outcomes[0]!.filter((o) => o.passed).length : 0;
    const single = this.seats.length === 1;
    const success = program !== null && passed === golden.length;
    const next: CodeState = Object.freeze({
      ...state,
      program,
      programTurn: state.turn,
      programError: error,
      golden: Object.freeze({ passed, total: golden.length }),
      report: Object.freeze(program && state.tests.length > 0 ? outcomes[1]! : []),
      seatIndex: single ? 0 : 1,
      turn: single ? state.turn + 1 : state.turn,
      done: single,
      success,
    });
    return this.result(
      next,
      program !== null,
      single ? { terminated: true, truncated: false } : { terminated: false, truncated: false },
      'coder',
      error,
    );
  }

  private async stepTester(state: CodeState, move: Move<unknown>): Promise<StepResult<CodeState>> {
    const { tests, error } = this.testsOf(move);
    const problem = state.instance.problem;
    const tolerance = this.toleranceOf(problem);
    const jobs = [];
    if (problem.reference !== null && tests.length > 0)
      jobs.push({ program: { language: 'python' as const, source: problem.reference }, tests, tolerance });
    if (state.program && tests.length > 0) jobs.push({ program: state.program, tests, tolerance });
    const outcomes = await this.runner.run(jobs);
    const testsValid =
      problem.reference !== null && tests.length > 0 ? outcomes[0]!.map((o) => o.passed) : tests.map(() => false);
    const report: readonly TestOutcome[] = state.program && tests.length > 0 ? outcomes[outcomes.length - 1]! : [];
    const allPass = state.program !== null && tests.length > 0 && report.every((o) => o.passed);
    const turn = state.turn + 1;
    const timeUp = !allPass && turn >= this.maxTurns;
    // An episode that ends with a correct program ends in a solved (terminal) state, even at the turn limit.
    const terminated = allPass || (timeUp && state.success);
    const truncated = timeUp && !terminated;
    const next: CodeState = Object.freeze({
      ...state,
      tests,
      testsTurn: state.turn,
      testsError: error,
      testsValid: Object.freeze(testsValid),
      report: Object.freeze(report),
      seatIndex: 0,
      turn,
      done: terminated || truncated,
    });
    return this.result(next, tests.length > 0, { terminated, truncated }, 'tester', error);
  }

  private result(
    next: CodeState,
    valid: boolean,
    done: { terminated: boolean; truncated: boolean },
    seat: CodeSeat,
    error: string | null,
  ): StepResult<CodeState> {
    const coderPassRate = next.program && next.golden.total > 0 ? next.golden.passed / next.golden.total : 0;
    const validTests = next.testsValid.filter(Boolean).length;
    const failsGolden = next.program !== null && next.golden.passed < next.golden.total;
    const rejects = next.report.some((o, i) => !o.passed && next.testsValid[i] === true);
    const testsPassed = next.report.filter((o) => o.passed).length;
    const success = next.done && next.success;
    const referencePassRate = next.tests.length > 0 ? validTests / next.tests.length : 0;
    const discrimination = failsGolden && rejects ? 1 : 0;
    const signals: Record<(typeof CODE_SIGNALS)[number], number> = {
      coder_pass_rate: coderPassRate,
      team: coderPassRate,
      tester_reference_pass_rate: referencePassRate,
      tester_discrimination: discrimination,
      tester_reward: referencePassRate + this.config.discriminationWeight * discrimination,
      tests_pass_rate: next.report.length > 0 ? testsPassed / next.report.length : 0,
      valid: valid ? 1 : 0,
      program_correct: next.success ? 1 : 0,
      success: success ? 1 : 0,
    };
    return {
      state: next,
      done,
      success,
      signals: Object.freeze(signals),
      info: {
        seat,
        problemId: next.instance.problem.id,
        golden: { passed: next.golden.passed, total: next.golden.total },
        tests: next.tests.length,
        testsValid: validTests,
        testsPassed,
        ...(error !== null ? { error } : {}),
      },
    };
  }

  /** @inheritdoc */
  oracle(state: CodeState, seat: string): ProgramAction | UnitTestsAction {
    const s = this.seatOf(seat);
    const problem = state.instance.problem;
    if (s === 'coder') {
      if (problem.reference === null)
        throw new Error(`code-v0: problem ${problem.id} has no reference solution, so the coder has no oracle`);
      return Object.freeze({ language: 'python', source: problem.reference });
    }
    const tests = this.scoredTests(state.instance).slice(0, Math.min(3, this.config.maxTesterTests));
    return Object.freeze({ tests: Object.freeze(tests.map((t) => ({ input: t.input, output: t.output }))) });
  }

  /** @inheritdoc */
  randomAction(state: CodeState, seat: string, rng: Rng): ProgramAction | UnitTestsAction {
    const s = this.seatOf(seat);
    if (s === 'coder') {
      const programs = [
        'print(0)',
        'print(input())',
        'import sys\nprint(sys.stdin.read().strip())',
        `print(${rng.int(100)})`,
        'print("YES")',
      ];
      return Object.freeze({ language: 'python', source: `${programs[rng.int(programs.length)]!}\n` });
    }
    const n = 1 + rng.int(3);
    const digits = (k: number): string => Array.from({ length: k }, () => String(rng.int(10))).join('');
    const tests = Array.from({ length: n }, () => ({
      input: `${digits(1 + rng.int(4))}\n`,
      output: `${digits(1 + rng.int(4))}\n`,
    }));
    return Object.freeze({ tests: Object.freeze(tests) });
  }

  private seatOf(seat: string): CodeSeat {
    if (!this.seats.some((s) => s.name === seat)) {
      throw new Error(`code-v0: unknown seat "${seat}"; the seats are ${this.seats.map((s) => s.name).join(', ')}`);
    }
    return seat as CodeSeat;
  }

  private toleranceOf(problem: CodeProblem): number | null {
    return this.config.floatTolerance ?? problem.tolerance ?? null;
  }

  private testsOf(move: Move<unknown>): { tests: readonly IoTest[]; error: string | null } {
    if (move.kind === 'invalid') return { tests: Object.freeze([]), error: move.error };
    const action = move.action as Partial<UnitTestsAction> | null;
    if (!action || typeof action !== 'object' || !Array.isArray(action.tests))
      return { tests: Object.freeze([]), error: 'the action is not {tests: [{input, output}]}' };
    const tests = action.tests
      .filter(
        (t): t is IoTest =>
          !!t &&
          typeof t.input === 'string' &&
          typeof t.output === 'string' &&
          t.input.length <= MAX_TEST_CHARS &&
          t.output.length <= MAX_TEST_CHARS,
      )
      .slice(0, this.config.maxTesterTests)
      .map((t) => Object.freeze({ input: t.input, output: t.output }));
    if (tests.length === 0)
      return { tests: Object.freeze([]), error: 'no usable test (each needs a string input and output)' };
    return { tests: Object.freeze(tests), error: null };
  }

  private problemSummary(): string {
    return `train ${this.problems.train.length}, validation ${this.problems.validation.length}, test ${this.problems.test.length}`;
  }
}

/** The program of a coder move, or why there is none. */
function programOf(move: Move<unknown>): { program: ProgramAction | null; error: string | null } {
  if (move.kind === 'invalid') return { program: null, error: move.error };
  const a = move.action as Partial<ProgramAction> | null;
  if (
    !a ||
    typeof a !== 'object' ||
    !LANGUAGES.includes(a.language as ProgramAction['language']) ||
    typeof a.source !== 'string'
  ) {
    return { program: null, error: `the action is not {language: ${LANGUAGES.join(' | ')}, source}` };
  }
  if (a.source.trim() === '') return { program: null, error: 'the program is empty' };
  if (a.source.length > MAX_SOURCE_CHARS)
    return { program: null, error: `the program is longer than ${MAX_SOURCE_CHARS} characters` };
  return { program: Object.freeze({ language: a.language!, source: a.source }), error: null };
}

/** Renders a program as a fenced block. */
export function renderProgram(program: ProgramAction): string {
  return `\`\`\`${program.language}\n${program.source.replace(/\n+$/, '')}\n\`\`\``;
}

function block(text: string): string {
  return `\`\`\`\n${headOf(text.replace(/\n+$/, ''), SHOWN_OUTPUT_CHARS)}\n\`\`\``;
}

/** Renders unit tests for an observation. */
export function renderTests(tests: readonly IoTest[]): string {
  return tests
    .map((t, i) => `Test ${i + 1}\nInput:\n${block(t.input)}\nExpected output:\n${block(t.output)}`)
    .join('\n\n');
}

/** Renders one failing test: input, expected, and what the program printed or how it crashed. */
export function renderFailure(o: TestOutcome, index: number): string {
  const head = `Test ${index + 1} failed.\nInput:\n${block(o.input)}\nExpected output:\n${block(o.expected)}`;
  if (o.verdict === 'ok') return `${head}\nGot:\n${block(o.got)}`;
  const what =
    o.verdict === 'timeout'
      ? 'timed out'
      : o.verdict === 'memory-limit'
        ? 'ran out of memory'
        : o.verdict === 'output-limit'
          ? 'printed too much output'
          : `crashed (exit code ${o.exitCode ?? 'none'})`;
  return `${head}\nThe program ${what} [verdict: ${o.verdict}].${o.stderr.trim() ? `\nstderr (end):\n\`\`\`\n${o.stderr.replace(/\n+$/, '')}\n\`\`\`` : ''}`;
}

/** The contribution of `code-v0`, injected with the process's sandbox pool, random streams and logger. */
@injectable()
export class CodeEnvironmentContribution implements EnvironmentContribution {
  /** @inheritdoc */
  readonly id = CODE_ENV_ID;
  /** @inheritdoc */
  readonly description =
    'Code: stdin/stdout programming problems; a coder writes programs, a tester writes unit tests (sandboxed runs)';
  /** @inheritdoc */
  readonly configSchema: JsonSchema = CODE_CONFIG_SCHEMA;

  /** What every environment it creates runs programs with. */
  readonly options: CodeEnvironmentOptions;

  /**
   * @param pool the process's sandbox pool (without a host: `sharedSandboxPool()`, the same one)
   * @param random the process's random streams
   * @param logger the process's logger
   */
  constructor(
    pool: SandboxPool = sharedSandboxPool(),
    random: RandomStreams = new DerivedRandomStreams(),
    logger?: Logger,
  ) {
    this.options = { pool, random, ...(logger ? { logger: logger.child(CODE_ENV_ID) } : {}) };
  }

  /** @inheritdoc */
  create(config: Record<string, unknown>): CodeEnvironment {
    return new CodeEnvironment(config, this.options);
  }
}
injectParameters(CodeEnvironmentContribution, [optionalService(SandboxPool), RandomStreams, Logger]);
