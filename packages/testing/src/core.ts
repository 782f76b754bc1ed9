/**
 * The shared machinery of the conformance suites: named checks that return failure messages, run either as mocha
 * tests or as plain functions (for `troupe test`).
 */
import { canonicalJson } from '@troupe/kernel';

/** One conformance failure. */
export interface ConformanceFailure {
  /** The suite, e.g. `environment plan-path-v0`. */
  readonly suite: string;
  /** The check, e.g. `states are immutable`. */
  readonly check: string;
  /** What went wrong, with enough detail to reproduce it (seed, split, index, turn, seat). */
  readonly message: string;
}

/** One named check. `run` resolves with the failure messages (empty when it passes); it never rejects. */
export interface ConformanceCheck {
  /** The suite it belongs to. */
  readonly suite: string;
  /** The check's name (a mocha test title). */
  readonly name: string;
  /** Runs the check. */
  run(): Promise<string[]>;
}

/** Most failure messages shown by one mocha test. */
export const MAX_SHOWN_FAILURES = 10;

/** Builds a check whose body pushes failures into a list; an exception in the body is itself a failure. */
export function check(
  suite: string,
  name: string,
  body: (fail: (message: string) => void) => Promise<void> | void,
): ConformanceCheck {
  return {
    suite,
    name,
    async run() {
      const failures: string[] = [];
      try {
        await body((message) => failures.push(message));
      } catch (err) {
        failures.push(`threw: ${describeError(err)}`);
      }
      return failures;
    },
  };
}

/** A one-line description of a thrown value. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

/** Builds the checks, or, when building them throws (e.g. `create` fails), one failing check that says why. */
export function guardedChecks(suite: string, build: () => ConformanceCheck[]): ConformanceCheck[] {
  try {
    return build();
  } catch (err) {
    return [check(suite, 'sets up the suite', (fail) => fail(`could not set up the suite: ${describeError(err)}`))];
  }
}

/** Runs checks in order and returns every failure. */
export async function runChecks(checks: readonly ConformanceCheck[]): Promise<ConformanceFailure[]> {
  const out: ConformanceFailure[] = [];
  for (const c of checks) {
    for (const message of await c.run()) out.push({ suite: c.suite, check: c.name, message });
  }
  return out;
}

interface MochaGlobals {
  describe(title: string, fn: () => void): unknown;
  it(title: string, fn: () => Promise<void>): unknown;
}

/**
 * Registers checks as mocha tests (`describe(suite)` with one `it` per check), using mocha's globals. Throws a clear
 * error when called outside mocha.
 */
export function registerChecks(
  suite: string,
  checks: readonly ConformanceCheck[] | (() => readonly ConformanceCheck[]),
): void {
  const g = globalThis as unknown as Partial<MochaGlobals>;
  if (typeof g.describe !== 'function' || typeof g.it !== 'function') {
    throw new Error(
      `@troupe/testing: "${suite}" registers mocha tests, but mocha's describe/it globals are not defined; ` +
        'run it under mocha, or call the check*Conformance function instead',
    );
  }
  const it = g.it.bind(globalThis);
  g.describe(suite, () => {
    const list = typeof checks === 'function' ? checks() : checks;
    for (const c of list) {
      it(c.name, async () => {
        const failures = await c.run();
        if (failures.length > 0) {
          const shown = failures
            .slice(0, MAX_SHOWN_FAILURES)
            .map((f) => `  - ${f}`)
            .join('\n');
          const more =
            failures.length > MAX_SHOWN_FAILURES ? `\n  ... and ${failures.length - MAX_SHOWN_FAILURES} more` : '';
          throw new Error(
            `${suite} / ${c.name}: ${failures.length} failure${failures.length === 1 ? '' : 's'}\n${shown}${more}`,
          );
        }
      });
    }
  });
}

/**
 * Deep-freezes a value (plain objects, arrays, and the own properties of other objects), returning it. The suites
 * freeze every state they hand to an environment, so a mutation throws a TypeError in strict-mode code.
 */
export function deepFreeze<T>(value: T, seen: Set<unknown> = new Set()): T {
  if (value === null || typeof value !== 'object' || seen.has(value)) return value;
  seen.add(value);
  if (ArrayBuffer.isView(value)) return value; // typed arrays with elements cannot be frozen
  for (const key of Reflect.ownKeys(value as object)) {
    const desc = Object.getOwnPropertyDescriptor(value, key);
    if (desc && 'value' in desc) deepFreeze(desc.value, seen);
  }
  Object.freeze(value);
  return value;
}

/** Canonical JSON that never throws (cycles and BigInts become a marker string). */
export function safeCanonical(value: unknown): string {
  try {
    return canonicalJson(value) ?? 'undefined';
  } catch (err) {
    return `<not serialisable: ${describeError(err)}>`;
  }
}

/** A short, printable excerpt of a string. */
export function excerpt(text: string, max = 60): string {
  const s = JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
  return s;
}

/**
 * A deep, unfrozen copy of a plain value (structuredClone, falling back to a JSON round trip). The suites step such
 * copies too: a write to a frozen object fails SILENTLY in sloppy-mode code, so freezing alone cannot reveal a
 * mutation, but comparing a mutable copy before and after the call can.
 */
export function mutableCopy<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch {
    return JSON.parse(safeCanonical(value)) as T;
  }
}
