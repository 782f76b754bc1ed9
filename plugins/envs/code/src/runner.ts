/**
 * Runs programs against stdin/stdout tests in the sandbox: every (program, test) pair of a step goes through ONE
 * `runMany` call, and outcomes are cached by content (program, input, expected output, tolerance), so the K branches
 * of the tree sampler and repeated oracle programs cost one execution each.
 */
import {
  contentHash,
  type Logger,
  type ProgramLimits,
  type ProgramRun,
  type ProgramRunner,
  type ProgramRunResult,
} from '@troupe/kernel';
import { outputsMatch } from './compare.js';
import type { IoTest, ProgramAction, TestOutcome } from './types.js';

/** The part of a sandbox runner the environment uses (so tests may inject any implementation). */
export type SandboxLike = Pick<ProgramRunner, 'runMany'>;

/** The sandbox refused to run a program: a configuration problem of the machine, not the program's fault. */
export class SandboxRefusedError extends Error {
  override readonly name = 'SandboxRefusedError';
}

/** One job: a program and the tests to run it on. */
export interface TestJob {
  /** The program. */
  readonly program: ProgramAction;
  /** The tests. */
  readonly tests: readonly IoTest[];
  /** Float tolerance of the comparison (null = exact after whitespace normalisation). */
  readonly tolerance: number | null;
}

/** Characters of stdout kept for display. */
export const SHOWN_OUTPUT_CHARS = 400;
/** Characters (from the end) of stderr kept for display. */
export const SHOWN_STDERR_CHARS = 600;

/** Trims text for display: the first `n` characters and a note of how many were cut. */
export function headOf(text: string, n: number): string {
  return text.length <= n ? text : `${text.slice(0, n)}… [${text.length - n} more characters]`;
}

/** Trims text for display: the last `n` characters (the end of a traceback is what matters). */
export function tailOf(text: string, n: number): string {
  return text.length <= n ? text : `[${text.length - n} characters cut]…${text.slice(text.length - n)}`;
}

/** Appends a final newline to a stdin text that lacks one (so `input()` and line readers see a complete line). */
export function stdinOf(input: string): string {
  return input === '' || input.endsWith('\n') ? input : `${input}\n`;
}

/** Largest stdout kept in the run cache (runs with more output are not cached). */
export const MAX_CACHED_STDOUT = 65_536;

/** Runs programs against tests through one sandbox, with a run cache. */
export class TestRunner {
  /**
   * Runs by content, shared by every runner of the process: a run depends only on the language, the source, the
   * stdin and the limits (all in the key), so K branches with the same program, or test sets that share inputs, run
   * each (program, input) once.
   */
  private static readonly cache = new Map<string, ProgramRunResult>();
  private readonly cache = TestRunner.cache;

  /**
   * @param sandbox resolves the sandbox lazily (it is created on the first run)
   * @param limits limits of every run
   * @param cacheSize runs kept (least recently used are evicted); 0 disables the cache
   * @param logger told (at debug) how many runs each call made and how many the cache answered
   */
  constructor(
    private readonly sandbox: () => SandboxLike,
    private readonly limits: Partial<ProgramLimits>,
    private readonly cacheSize = 4096,
    private readonly logger?: Logger,
  ) {}

  /**
   * Runs every job; returns one outcome list per job, in order. All runs that are not cached go through ONE
   * `runMany` call; a (program, input) pair that occurs several times runs once.
   * @throws SandboxRefusedError when the sandbox refuses a run (for example, no isolation available)
   */
  async run(jobs: readonly TestJob[]): Promise<TestOutcome[][]> {
    const keys = jobs.map((job) =>
      job.tests.map((test) =>
        contentHash([job.program.language, job.program.source, stdinOf(test.input), this.limits]),
      ),
    );
    const known = new Map<string, ProgramRunResult>();
    const requests: ProgramRun[] = [];
    const requested: string[] = [];
    const requestedSet = new Set<string>();
    jobs.forEach((job, j) => {
      job.tests.forEach((test, t) => {
        const key = keys[j]![t]!;
        if (known.has(key) || requestedSet.has(key)) return;
        const hit = this.cacheSize > 0 ? this.cache.get(key) : undefined;
        if (hit) {
          this.cache.delete(key);
          this.cache.set(key, hit);
          known.set(key, hit);
          return;
        }
        requested.push(key);
        requestedSet.add(key);
        requests.push({
          language: job.program.language,
          source: job.program.source,
          stdin: stdinOf(test.input),
          limits: { ...this.limits },
        });
      });
    });
    if (this.logger?.enabled('debug'))
      this.logger.debug('test runs', { jobs: jobs.length, runs: requests.length, cached: known.size });
    if (requests.length > 0) {
      const runs = await this.sandbox().runMany(requests);
      runs.forEach((run, i) => {
        if (run.verdict === 'refused') {
          throw new SandboxRefusedError(
            `@troupe/env-code: the sandbox refused to run a program: ${run.reason ?? 'no reason given'}. ` +
              'Install bubblewrap (apt-get install bubblewrap) or make `unshare` work, or set environment.config.sandbox.allowUnisolated: true ' +
              'on a machine where running untrusted code unisolated is acceptable.',
          );
        }
        // Judging reads stdout and the verdict; stderr is only displayed (its end), so keep its last 4,096 characters.
        const kept: ProgramRunResult = {
          ...run,
          stderr: run.stderr.length > 4096 ? run.stderr.slice(-4096) : run.stderr,
        };
        known.set(requested[i]!, kept);
        if (this.cacheSize > 0 && run.stdout.length <= MAX_CACHED_STDOUT) {
          this.cache.set(requested[i]!, kept);
          while (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value as string);
        }
      });
    }
    return jobs.map((job, j) => job.tests.map((test, t) => toOutcome(test, known.get(keys[j]![t]!)!, job.tolerance)));
  }
}

/**
 * Judges one run. Only the exit code decides a crash: stderr output (warnings) with exit code 0 is not a failure.
 */
export function toOutcome(test: IoTest, run: ProgramRunResult, tolerance: number | null): TestOutcome {
  const passed = run.verdict === 'ok' && outputsMatch(run.stdout, test.output, tolerance);
  return Object.freeze({
    input: test.input,
    expected: test.output,
    passed,
    verdict: run.verdict,
    exitCode: run.exitCode,
    got: headOf(run.stdout, SHOWN_OUTPUT_CHARS),
    stderr: tailOf(run.stderr, SHOWN_STDERR_CHARS),
  });
}
