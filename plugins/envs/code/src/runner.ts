/**
 * Runs programs against stdin/stdout tests in the sandbox: every (program, test) pair of a step goes through ONE
 * `runMany` call, and outcomes are cached by content (program, input, expected output, tolerance), so the K branches
 * of the tree sampler and repeated oracle programs cost one execution each.
 */
import { contentHash } from '@troupe/kernel';
import type { RunRequest, RunResult, SandboxLimits } from '@troupe/sandbox';
import { outputsMatch } from './compare.js';
import type { IoTest, ProgramAction, TestOutcome } from './types.js';

/** The part of `@troupe/sandbox`'s `Sandbox` the environment uses (so tests may inject any implementation). */
export interface SandboxLike {
  /** Runs several programs (bounded concurrency inside); results in request order. */
  runMany(requests: readonly RunRequest[]): Promise<RunResult[]>;
}

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

/** Runs programs against tests through one sandbox, with an outcome cache. */
export class TestRunner {
  /**
   * Outcomes by content, shared by every runner of the process (an outcome depends only on the program, the test,
   * the tolerance and the limits, all in the key).
   */
  private static readonly cache = new Map<string, TestOutcome>();
  private readonly cache = TestRunner.cache;

  /**
   * @param sandbox resolves the sandbox lazily (it is created on the first run)
   * @param limits limits of every run
   * @param cacheSize outcomes kept (least recently used are evicted); 0 disables the cache
   */
  constructor(
    private readonly sandbox: () => SandboxLike,
    private readonly limits: Partial<SandboxLimits>,
    private readonly cacheSize = 4096,
  ) {}

  /**
   * Runs every job; returns one outcome list per job, in order.
   * @throws SandboxRefusedError when the sandbox refuses a run (for example, no isolation available)
   */
  async run(jobs: readonly TestJob[]): Promise<TestOutcome[][]> {
    const results: (TestOutcome | undefined)[][] = jobs.map((job) => job.tests.map(() => undefined));
    const pending: { job: number; test: number; key: string }[] = [];
    const requests: RunRequest[] = [];
    const byKey = new Map<string, number>();
    jobs.forEach((job, j) => {
      job.tests.forEach((test, t) => {
        const key = contentHash([job.program.language, job.program.source, test.input, test.output, job.tolerance, this.limits]);
        const hit = this.cacheSize > 0 ? this.cache.get(key) : undefined;
        if (hit) {
          this.cache.delete(key);
          this.cache.set(key, hit);
          results[j]![t] = hit;
          return;
        }
        pending.push({ job: j, test: t, key });
        if (!byKey.has(key)) {
          byKey.set(key, requests.length);
          requests.push({ language: job.program.language, source: job.program.source, stdin: stdinOf(test.input), limits: { ...this.limits } });
        }
      });
    });
    if (requests.length > 0) {
      const runs = await this.sandbox().runMany(requests);
      const outcomes = new Map<string, TestOutcome>();
      for (const p of pending) {
        let outcome = outcomes.get(p.key);
        if (!outcome) {
          const run = runs[byKey.get(p.key)!]!;
          if (run.verdict === 'refused') {
            throw new SandboxRefusedError(
              `@troupe/env-code: the sandbox refused to run a program: ${run.reason ?? 'no reason given'}. ` +
                'Install bubblewrap (apt-get install bubblewrap) or make `unshare` work, or set environment.config.sandbox.allowUnisolated: true ' +
                'on a machine where running untrusted code unisolated is acceptable.',
            );
          }
          const job = jobs[p.job]!;
          const test = job.tests[p.test]!;
          outcome = toOutcome(test, run, job.tolerance);
          outcomes.set(p.key, outcome);
          if (this.cacheSize > 0) {
            this.cache.set(p.key, outcome);
            while (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value as string);
          }
        }
        results[p.job]![p.test] = outcome;
      }
    }
    return results as TestOutcome[][];
  }
}

/**
 * Judges one run. Only the exit code decides a crash: stderr output (warnings) with exit code 0 is not a failure.
 */
export function toOutcome(test: IoTest, run: RunResult, tolerance: number | null): TestOutcome {
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
