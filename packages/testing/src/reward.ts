/**
 * The reward conformance suite: every declared term present and finite, deterministic, inputs untouched.
 */
import type { RewardCheckContext, RewardContribution, RewardFunction, Transition } from '@troupe/kernel';
import type { ConformanceCheck, ConformanceFailure } from './core.js';
import {
  check,
  deepFreeze,
  describeError,
  guardedChecks,
  mutableCopy,
  registerChecks,
  runChecks,
  safeCanonical,
} from './core.js';
import { compileValidator } from './schema.js';

/** Options of the reward suite. */
export interface RewardConformanceOptions {
  /** The reward config. Default `{}`. */
  readonly config?: Record<string, unknown>;
  /** Sample transitions (e.g. recorded from an environment with `playEpisode`); at least one. */
  readonly transitions: readonly Transition[];
  /** When the contribution has `check`, it must accept `config` in this context (e.g. the environment's signals). */
  readonly checkContext?: RewardCheckContext;
}

/** The checks of the reward suite. */
export function rewardChecks(contribution: RewardContribution, options: RewardConformanceOptions): ConformanceCheck[] {
  const suite = `reward ${contribution.id} conformance`;
  const fn: RewardFunction = contribution.create(options.config ?? {});
  const transitions = options.transitions.map((t) => deepFreeze(t));
  const declared = contribution.terms;
  const checks: ConformanceCheck[] = [
    check(suite, 'declares its id and terms', (fail) => {
      if (fn.id !== contribution.id)
        fail(`reward function id "${fn.id}" differs from the contribution id "${contribution.id}"`);
      if (!/^[a-z0-9][a-z0-9-]*-v\d+$/.test(contribution.id))
        fail(`id "${contribution.id}" is not of the form name-vN`);
      if (declared.length === 0) fail('declares no terms');
      if (new Set(declared).size !== declared.length) fail(`term names are not unique: ${declared.join(', ')}`);
      try {
        compileValidator(contribution.configSchema);
      } catch (err) {
        fail(`the config schema is invalid: ${describeError(err)}`);
      }
      if (transitions.length === 0) fail('the suite needs at least one sample transition');
    }),
    check(suite, 'every declared term is present and finite', (fail) => {
      transitions.forEach((t, i) => {
        let terms: Record<string, number>;
        try {
          terms = fn.terms(t);
        } catch (err) {
          fail(`transition ${i} (seat ${t.seat}, turn ${t.turn}): terms() threw ${describeError(err)}`);
          return;
        }
        for (const name of declared) {
          const v = terms[name];
          if (typeof v !== 'number' || !Number.isFinite(v))
            fail(`transition ${i} (seat ${t.seat}, turn ${t.turn}): term "${name}" is ${String(v)}`);
        }
        for (const name of Object.keys(terms)) {
          if (!declared.includes(name))
            fail(`transition ${i}: term "${name}" is not declared (declared: ${declared.join(', ')})`);
        }
      });
    }),
    check(suite, 'terms are deterministic and leave the transition untouched', (fail) => {
      transitions.forEach((t, i) => {
        const before = safeCanonical(t);
        let a: unknown, b: unknown;
        try {
          a = fn.terms(t);
          b = fn.terms(t);
        } catch {
          return; /* reported by the previous check */
        }
        if (safeCanonical(a) !== safeCanonical(b)) fail(`transition ${i}: two calls gave different terms`);
        if (safeCanonical(t) !== before) fail(`transition ${i}: terms() changed the transition`);
        const copy = mutableCopy(t);
        try {
          fn.terms(copy);
        } catch {
          /* reported above */
        }
        if (safeCanonical(copy) !== before)
          fail(`transition ${i}: terms() wrote into the transition (seen on a mutable copy)`);
      });
    }),
  ];
  if (typeof contribution.check === 'function' && options.checkContext) {
    const context = options.checkContext;
    checks.push(
      check(suite, 'check() accepts the config', (fail) => {
        for (const p of contribution.check!(options.config ?? {}, context))
          fail(`check() reported ${p.path.join('.') || '(config)'}: ${p.message}`);
      }),
    );
  }
  return checks;
}

/** Registers the reward suite as mocha tests. */
export function rewardConformance(contribution: RewardContribution, options: RewardConformanceOptions): void {
  const suite = `reward ${contribution.id} conformance`;
  registerChecks(suite, () => guardedChecks(suite, () => rewardChecks(contribution, options)));
}

/** Runs the reward suite and returns every failure. */
export async function checkRewardConformance(
  contribution: RewardContribution,
  options: RewardConformanceOptions,
): Promise<ConformanceFailure[]> {
  const suite = `reward ${contribution.id} conformance`;
  return runChecks(guardedChecks(suite, () => rewardChecks(contribution, options)));
}
