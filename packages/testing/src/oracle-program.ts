/**
 * The oracle-program suite: an environment that offers `oracleProgram` (the oracle written as a program, what the coder
 * learns to write when it plays a seat as the paper's tool agent) must give programs that, run by the real Python
 * interpreter with no input, print exactly the oracle's action, as the coder role's output parser reads it. Checked on
 * starting states and on states after a turn of random actions (later turns start from positions the oracle did not
 * choose).
 */
import { execFile } from 'node:child_process';
import type { Environment, EnvironmentContribution, Rng } from '@troupe/kernel';
import { canonicalJson, createRng } from '@troupe/kernel';
import type { ConformanceCheck, ConformanceFailure } from './core.js';
import { check, guardedChecks, registerChecks, runChecks } from './core.js';

/** Options of the oracle-program suite. */
export interface OracleProgramConformanceOptions {
  /** The environment config. Default `{}`. */
  readonly config?: Record<string, unknown>;
  /** The seats whose programs are checked. Default: every seat of the environment. */
  readonly seats?: readonly string[];
  /** Train instances to start from (each gives its starting state and, unless over, the state after a random turn). Default 30. */
  readonly instances?: number;
  /** Seed of the instance stream and of the random turn. Default 3. */
  readonly seed?: number;
  /** How the coder role reads a program's printed output as an action of `actionType` (throw when it cannot). */
  readonly parse: (stdout: string, actionType: string) => unknown;
  /** The Python interpreter. Default `python3`. */
  readonly python?: string;
  /** Fewest (state, seat) pairs, as a fraction of all, that must have a program. Default 0.5. */
  readonly minCoverage?: number;
}

/** What one program did: its standard output, or the exception that ended it. */
export interface ProgramRun {
  /** Everything it printed. */
  readonly stdout: string;
  /** `Type: message` of an exception other than a clean `exit()`, else absent. */
  readonly error?: string;
}

/**
 * Python that reads a JSON list of programs on stdin, runs each in a fresh namespace with its output captured (a
 * `SystemExit` with code 0 or none is a clean end) and prints a JSON list of `{stdout, error?}`.
 */
const DRIVER = [
  'import contextlib, io, json, sys',
  'out = []',
  'for p in json.load(sys.stdin):',
  '    buf = io.StringIO()',
  '    run = {}',
  '    try:',
  '        with contextlib.redirect_stdout(buf):',
  '            exec(p, {"__name__": "__main__"})',
  '    except SystemExit as e:',
  '        if e.code not in (None, 0): run["error"] = "SystemExit: %s" % e.code',
  '    except BaseException as e:',
  '        run["error"] = "%s: %s" % (type(e).__name__, e)',
  '    run["stdout"] = buf.getvalue()',
  '    out.append(run)',
  'print(json.dumps(out))',
].join('\n');

/** Runs every program in one Python process (each in a fresh namespace) and resolves with what each did. */
export function runPythonPrograms(
  programs: readonly string[],
  python = 'python3',
  timeoutMs = 120_000,
): Promise<ProgramRun[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      python,
      ['-c', DRIVER],
      { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          reject(
            new Error(
              `could not run ${programs.length} programs with ${python}: ${err.message}${stderr ? `\n${stderr.slice(-500)}` : ''}`,
            ),
          );
          return;
        }
        try {
          resolve(JSON.parse(stdout) as ProgramRun[]);
        } catch (parseErr) {
          reject(new Error(`${python} printed no result list: ${(parseErr as Error).message}`));
        }
      },
    );
    child.stdin?.end(JSON.stringify(programs));
  });
}

/** A state to check, and where it comes from (for failure messages). */
export interface LabelledState {
  /** The state. */
  readonly state: unknown;
  /** `train instance 4 (seed 3), start` or `…, after a random turn`. */
  readonly label: string;
}

/** Starting states of `count` train instances and, for each, the state after one turn of random actions (if not over). */
export async function startAndLaterStates(env: Environment, count: number, seed: number): Promise<LabelledState[]> {
  const rng: Rng = createRng(seed);
  const out: LabelledState[] = [];
  for (let i = 0; i < count; i++) {
    let state = env.reset(env.instance('train', i, seed));
    out.push({ state, label: `train instance ${i} (seed ${seed}), start` });
    let over = false;
    for (const seat of env.seats) {
      const r = await env.step(state, seat.name, {
        kind: 'action',
        action: env.randomAction(state, seat.name, rng),
        text: '',
      });
      state = r.state;
      over = r.done.terminated || r.done.truncated;
      if (over) break;
    }
    if (!over) out.push({ state, label: `train instance ${i} (seed ${seed}), after a random turn` });
  }
  return out;
}

/** The checks of the oracle-program suite. */
export function oracleProgramChecks(
  contribution: EnvironmentContribution,
  options: OracleProgramConformanceOptions,
): ConformanceCheck[] {
  const suite = oracleProgramSuiteName(contribution);
  const env = contribution.create({ ...(options.config ?? {}) });
  const seats = options.seats ?? env.seats.map((s) => s.name);
  return [
    check(
      suite,
      "run by Python, each oracle program prints the oracle's action (starting and later states)",
      async (fail) => {
        if (typeof env.oracleProgram !== 'function' || typeof env.oracle !== 'function') {
          fail('the environment has no oracleProgram (or no oracle to compare it with)');
          return;
        }
        const states = await startAndLaterStates(env, options.instances ?? 30, options.seed ?? 3);
        const cases: { state: number; seat: string; actionType: string; program: string }[] = [];
        let pairs = 0;
        states.forEach(({ state }, i) => {
          for (const seat of seats) {
            pairs++;
            const program = env.oracleProgram!(state, seat, 'python');
            if (program !== undefined)
              cases.push({ state: i, seat, actionType: env.seats.find((s) => s.name === seat)!.actionType, program });
          }
        });
        const coverage = cases.length / Math.max(1, pairs);
        if (coverage < (options.minCoverage ?? 0.5))
          fail(`only ${cases.length} of ${pairs} (state, seat) pairs have a Python program`);
        const runs = await runPythonPrograms(
          cases.map((c) => c.program),
          options.python,
        );
        cases.forEach((c, k) => {
          const run = runs[k]!;
          const where = `${states[c.state]!.label}, seat ${c.seat}`;
          if (run.error) {
            fail(`${where}: the program raised ${run.error}\n${c.program}`);
            return;
          }
          let action: unknown;
          try {
            action = options.parse(run.stdout, c.actionType);
          } catch (err) {
            fail(
              `${where}: its output ${JSON.stringify(run.stdout.slice(0, 200))} does not parse: ${(err as Error).message}`,
            );
            return;
          }
          const oracle = env.oracle!(states[c.state]!.state, c.seat);
          if (canonicalJson(action) !== canonicalJson(oracle)) {
            fail(
              `${where}: printed ${canonicalJson(action)}, the oracle's action is ${canonicalJson(oracle)}\n${c.program}`,
            );
          }
        });
      },
    ),
  ];
}

/** The suite's name for a contribution. */
function oracleProgramSuiteName(contribution: EnvironmentContribution): string {
  return `oracle program of ${contribution.id}`;
}

/** Registers the oracle-program suite as mocha tests. */
export function oracleProgramConformance(
  contribution: EnvironmentContribution,
  options: OracleProgramConformanceOptions,
): void {
  const suite = oracleProgramSuiteName(contribution);
  registerChecks(suite, () => guardedChecks(suite, () => oracleProgramChecks(contribution, options)));
}

/** Runs the oracle-program suite and returns every failure. */
export async function checkOracleProgramConformance(
  contribution: EnvironmentContribution,
  options: OracleProgramConformanceOptions,
): Promise<ConformanceFailure[]> {
  const suite = oracleProgramSuiteName(contribution);
  return runChecks(guardedChecks(suite, () => oracleProgramChecks(contribution, options)));
}
