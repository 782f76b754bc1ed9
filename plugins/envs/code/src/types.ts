import type { Split } from '@troupe/kernel';

/** Languages a program may be written in (both run in the sandbox). */
export type Language = 'python' | 'javascript';

/** All supported languages. */
export const LANGUAGES: readonly Language[] = ['python', 'javascript'];

/** One stdin/stdout test: the program gets `input` on stdin and must print `output`. */
export interface IoTest {
  /** Text fed to standard input. */
  readonly input: string;
  /** Expected standard output (compared whitespace-normalised, see `outputsMatch`). */
  readonly output: string;
}

/** One programming problem. */
export interface CodeProblem {
  /** Identifier, unique within its dataset (shipped set: a slug such as `sum-of-two`). */
  readonly id: string;
  /** The problem statement shown to the seats. */
  readonly question: string;
  /** Golden (hidden) tests, in dataset order. Never shown to any seat. */
  readonly tests: readonly IoTest[];
  /** A correct Python 3 reference solution, or null when the dataset has none (LiveCodeBench). */
  readonly reference: string | null;
  /** Optional float tolerance for output comparison (see `outputsMatch`). */
  readonly tolerance?: number | null;
  /** Split named by the dataset itself (from a split field or split file), when there is one. */
  readonly split?: Split;
  /** Where the problem came from, `file:line`, for error messages. */
  readonly origin?: string;
}

/** Action of the `coder` seat (action type `program`). */
export interface ProgramAction {
  /** The language of `source`. */
  readonly language: Language;
  /** A complete program that reads stdin and writes stdout. */
  readonly source: string;
}

/** Action of the `tester` seat (action type `unit-tests`). */
export interface UnitTestsAction {
  /** The tests: input fed to stdin and the exact expected output. */
  readonly tests: readonly IoTest[];
}

/** One instance of the code environment: a problem and the split it was drawn from. */
export interface CodeInstance {
  /** The problem. */
  readonly problem: CodeProblem;
  /** The split it belongs to (decides how many golden tests are scored). */
  readonly split: Split;
}

/** Outcome of running one program on one test. */
export interface TestOutcome {
  /** The test input. */
  readonly input: string;
  /** The expected output. */
  readonly expected: string;
  /** Whether the program's output matched. */
  readonly passed: boolean;
  /** The sandbox verdict (`ok` means the program exited 0; its output may still be wrong). */
  readonly verdict: string;
  /** Exit code, or null when killed. */
  readonly exitCode: number | null;
  /** The program's stdout, trimmed for display. */
  readonly got: string;
  /** The program's stderr, trimmed (last lines) for display. */
  readonly stderr: string;
}

/** Pass count of a program on a set of tests. */
export interface PassCount {
  /** Tests passed. */
  readonly passed: number;
  /** Tests run. */
  readonly total: number;
}

/** The state of one code episode. Immutable: `step` returns a new value. */
export interface CodeState {
  /** The instance. */
  readonly instance: CodeInstance;
  /** Current turn (0-based). */
  readonly turn: number;
  /** Index (into the environment's seats) of the seat that acts next. */
  readonly seatIndex: number;
  /** The coder's latest program, or null (none yet, or its last output was invalid). */
  readonly program: ProgramAction | null;
  /** Turn in which `program` was written. */
  readonly programTurn: number | null;
  /** Why the coder's latest output was invalid, or null. */
  readonly programError: string | null;
  /** The current program on the scored golden tests. */
  readonly golden: PassCount;
  /** The tester's latest tests (possibly empty). */
  readonly tests: readonly IoTest[];
  /** Turn in which `tests` were written. */
  readonly testsTurn: number | null;
  /** Why the tester's latest output was invalid, or null. */
  readonly testsError: string | null;
  /** For each of `tests`, whether the reference solution passes it (the test is correct). */
  readonly testsValid: readonly boolean[];
  /** The current program on the tester's current tests (empty when either is missing). */
  readonly report: readonly TestOutcome[];
  /** Whether the episode is over. */
  readonly done: boolean;
  /** Whether the current program passes every scored golden test. */
  readonly success: boolean;
}
