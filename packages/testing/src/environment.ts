/**
 * The environment conformance suite (like Gymnasium's `check_env` and PettingZoo's `api_test`).
 */
import type { Environment, EnvironmentContribution, Move, Observation, Split, StepResult } from '@troupe/kernel';
import { SPLITS, createRng, deriveSeed } from '@troupe/kernel';
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
import type { Validator } from './schema.js';
import { compileValidator } from './schema.js';

/** Options of the environment suite. */
export interface EnvironmentConformanceOptions {
  /** The environment config (defaults filled in as the kernel would). Default `{}`. */
  readonly config?: Record<string, unknown>;
  /** Episodes per seed and per play mode (random, oracle). Default 4. */
  readonly episodes?: number;
  /** Seeds of the instance streams and of random play. Default `[0, 1]`. */
  readonly seeds?: readonly number[];
  /** The split episodes are drawn from. Default `train`. */
  readonly split?: Split;
  /** Instances drawn per split to check that splits are disjoint. Default 300. */
  readonly splitSamples?: number;
  /** Splits to check for disjointness. Default all three. */
  readonly splits?: readonly Split[];
  /**
   * The part of a state that every seat's observation must reflect (e.g. `(s) => s.position`). When it changes
   * between two states, every seat's `state` text must change too: this catches observations that keep showing the
   * initial state. Without it, the suite only checks that SOME seat's observation changes when the state does.
   */
  readonly stateView?: (state: unknown) => unknown;
}

/** One recorded step of a rollout. */
export interface RecordedStep {
  /** The seat that acted. */
  readonly seat: string;
  /** The turn. */
  readonly turn: number;
  /** What the seat saw. */
  readonly observation: Observation;
  /** What it did. */
  readonly move: Move;
  /** What the environment returned. */
  readonly result: StepResult<unknown>;
  /** The state before the step. */
  readonly before: unknown;
}

/** A finished rollout. */
export interface Rollout {
  /** The steps, in order. */
  readonly steps: readonly RecordedStep[];
  /** Whether the episode ended (terminated or truncated) within `maxTurns`. */
  readonly ended: boolean;
  /** Whether the last step reported success. */
  readonly success: boolean;
}

/** Chooses a seat's action in a state. */
export type ActionChooser = (state: unknown, seat: string) => unknown;

/**
 * Plays one episode: for each turn and each seat in order, observe, choose, step; stops when `done`. Every state is
 * deep-frozen before it is handed back to the environment. `onStep` sees each step (to run extra checks).
 */
export async function playEpisode(
  env: Environment,
  instance: unknown,
  choose: ActionChooser,
  onStep?: (step: RecordedStep, after: unknown) => Promise<void> | void,
): Promise<Rollout> {
  const steps: RecordedStep[] = [];
  let state = deepFreeze(env.reset(instance));
  for (let turn = 0; turn < env.maxTurns; turn++) {
    for (const { name: seat } of env.seats) {
      const observation = env.observe(state, seat);
      const action = choose(state, seat);
      const move: Move = deepFreeze({ kind: 'action', action, text: safeCanonical(action) });
      const result = deepFreeze(await env.step(state, seat, move));
      const step: RecordedStep = { seat, turn, observation, move, result, before: state };
      steps.push(step);
      await onStep?.(step, result.state);
      state = result.state;
      if (result.done.terminated || result.done.truncated) return { steps, ended: true, success: result.success };
    }
  }
  return { steps, ended: false, success: steps.at(-1)?.result.success ?? false };
}

/** A JSON-comparable transcript of a rollout (observations, moves, results). */
function transcriptOf(r: Rollout): string {
  return safeCanonical(
    r.steps.map((s) => ({ seat: s.seat, turn: s.turn, observation: s.observation, move: s.move, result: s.result })),
  );
}

function validObservation(o: unknown): string | null {
  const obs = o as Partial<Observation> | null;
  if (!obs || typeof obs !== 'object') return 'is not an object';
  if (typeof obs.task !== 'string') return 'task is not a string';
  if (typeof obs.state !== 'string') return 'state is not a string';
  if (!Number.isInteger(obs.turn)) return 'turn is not an integer';
  if (
    !Array.isArray(obs.context) ||
    obs.context.some((c) => typeof c?.label !== 'string' || typeof c?.text !== 'string')
  ) {
    return 'context is not a list of { label, text } strings';
  }
  return null;
}

/** The checks of the environment suite, for one contribution. */
export function environmentChecks(
  contribution: EnvironmentContribution,
  options: EnvironmentConformanceOptions = {},
): ConformanceCheck[] {
  const suite = environmentSuiteName(contribution, options);
  const config = options.config ?? {};
  const episodes = options.episodes ?? 4;
  const seeds = options.seeds ?? [0, 1];
  const split = options.split ?? 'train';
  const splitSamples = options.splitSamples ?? 300;
  const splits = options.splits ?? SPLITS;
  const make = (): Environment => contribution.create(config);
  const where = (seed: number, ep: number, mode: string): string =>
    `${mode} play, seed ${seed}, ${split} instance ${ep}`;

  const validators = (env: Environment): Map<string, Validator> => {
    const byType = new Map(env.actionTypes.map((t) => [t.name, compileValidator(t.schema)]));
    return new Map(env.seats.map((s) => [s.name, byType.get(s.actionType)!]));
  };
  const randomChooser = (env: Environment, seed: number, ep: number): ActionChooser => {
    const rng = createRng(deriveSeed('conformance', seed, ep));
    return (state, seat) => env.randomAction(state, seat, rng);
  };
  const oracleChooser =
    (env: Environment): ActionChooser =>
    (state, seat) =>
      env.oracle!(state, seat);

  /** Runs every (seed, episode) under a chooser, calling `visit` for each rollout. */
  const forEachEpisode = async (
    mode: 'random' | 'oracle',
    fail: (m: string) => void,
    visit: (r: Rollout, label: string, env: Environment, instance: unknown) => Promise<void> | void,
    onStep?: (label: string, env: Environment) => (step: RecordedStep, after: unknown) => Promise<void> | void,
  ): Promise<void> => {
    const env = make();
    for (const seed of seeds) {
      for (let ep = 0; ep < episodes; ep++) {
        const label = where(seed, ep, mode);
        try {
          const instance = env.instance(split, ep, seed);
          const chooser = mode === 'random' ? randomChooser(env, seed, ep) : oracleChooser(env);
          const r = await playEpisode(env, instance, chooser, onStep?.(label, env));
          await visit(r, label, env, instance);
        } catch (err) {
          fail(`${label}: ${describeError(err)}`);
        }
      }
    }
  };

  const checks: ConformanceCheck[] = [
    check(suite, 'declares its id, seats and action types', (fail) => {
      const env = make();
      if (env.id !== contribution.id)
        fail(`environment id "${env.id}" differs from the contribution id "${contribution.id}"`);
      if (!/^[a-z0-9][a-z0-9-]*-v\d+$/.test(contribution.id))
        fail(`id "${contribution.id}" is not of the form name-vN`);
      if (!Number.isInteger(env.maxTurns) || env.maxTurns < 1)
        fail(`maxTurns must be a positive integer, got ${env.maxTurns}`);
      if (env.seats.length === 0) fail('declares no seats');
      const names = env.seats.map((s) => s.name);
      if (new Set(names).size !== names.length) fail(`seat names are not unique: ${names.join(', ')}`);
      const typeNames = env.actionTypes.map((t) => t.name);
      if (new Set(typeNames).size !== typeNames.length)
        fail(`action type names are not unique: ${typeNames.join(', ')}`);
      for (const s of env.seats) {
        if (!typeNames.includes(s.actionType))
          fail(
            `seat "${s.name}" uses action type "${s.actionType}", which is not declared (declared: ${typeNames.join(', ')})`,
          );
        if (!s.description) fail(`seat "${s.name}" has no description`);
      }
      for (const t of env.actionTypes) {
        try {
          compileValidator(t.schema);
        } catch (err) {
          fail(`action type "${t.name}" has an invalid JSON schema: ${describeError(err)}`);
        }
      }
      try {
        compileValidator(contribution.configSchema);
      } catch (err) {
        fail(`the config schema is invalid: ${describeError(err)}`);
      }
    }),

    check(suite, 'generates instances deterministically', (fail) => {
      const a = make();
      const b = make();
      for (const seed of seeds) {
        for (const s of splits) {
          for (let i = 0; i < episodes; i++) {
            const x = a.instance(s, i, seed);
            const y = b.instance(s, i, seed);
            if (safeCanonical(x) !== safeCanonical(y))
              fail(`${s} instance ${i} of seed ${seed} differs between two calls`);
            if (a.instanceKey(x) !== b.instanceKey(y))
              fail(`instanceKey of ${s} instance ${i} (seed ${seed}) is not deterministic`);
            const copy = JSON.parse(safeCanonical(x)) as unknown;
            if (a.instanceKey(copy) !== a.instanceKey(x))
              fail(
                `instanceKey of ${s} instance ${i} (seed ${seed}) depends on more than the content (a JSON copy has another key)`,
              );
            try {
              JSON.stringify(a.describe(x));
            } catch (err) {
              fail(`describe(${s} instance ${i}) is not JSON-serialisable: ${describeError(err)}`);
            }
          }
        }
      }
    }),

    check(suite, 'splits are disjoint by instance content', (fail) => {
      const env = make();
      const owner = new Map<string, string>();
      for (const s of splits) {
        for (const seed of seeds.slice(0, 1)) {
          for (let i = 0; i < splitSamples; i++) {
            const key = env.instanceKey(env.instance(s, i, seed));
            const prev = owner.get(key);
            if (prev !== undefined && !prev.startsWith(`${s} `))
              fail(`${s} instance ${i} (seed ${seed}) has the same content key as ${prev}`);
            if (prev === undefined) owner.set(key, `${s} instance ${i} (seed ${seed})`);
          }
        }
      }
    }),

    check(suite, 'rollouts are deterministic per seed', async (fail) => {
      for (const seed of seeds) {
        for (let ep = 0; ep < episodes; ep++) {
          const label = where(seed, ep, 'random');
          try {
            const e1 = make();
            const e2 = make();
            const r1 = await playEpisode(e1, e1.instance(split, ep, seed), randomChooser(e1, seed, ep));
            const r2 = await playEpisode(e2, e2.instance(split, ep, seed), randomChooser(e2, seed, ep));
            if (transcriptOf(r1) !== transcriptOf(r2)) fail(`${label}: two runs with the same seed differ`);
          } catch (err) {
            fail(`${label}: ${describeError(err)}`);
          }
        }
      }
    }),

    check(suite, 'states are immutable and step is pure', async (fail) => {
      let checkedRepeat = false;
      await forEachEpisode(
        'random',
        fail,
        () => undefined,
        (label, env) => async (step) => {
          const at = `${label}, turn ${step.turn}, ${step.seat}`;
          // `before` was deep-frozen by playEpisode: a mutation throws in strict code (reported by forEachEpisode).
          const beforeJson = safeCanonical(step.before);
          if (!Object.isFrozen(step.before)) fail(`${at}: the state was not frozen`);
          const again = await env.step(step.before, step.seat, step.move);
          if (safeCanonical(step.before) !== beforeJson) fail(`${at}: step changed its input state`);
          if (safeCanonical(again) !== safeCanonical(step.result))
            fail(`${at}: stepping the same state with the same move twice gave different results`);
          if (again.state === step.before)
            fail(`${at}: step returned its input state object; it must return a new value`);
          // In sloppy-mode code a write to a frozen object fails silently: step a mutable copy and compare.
          const copy = mutableCopy(step.before);
          const onCopy = await env.step(copy, step.seat, mutableCopy(step.move));
          if (safeCanonical(copy) !== beforeJson)
            fail(`${at}: step wrote into its input state (seen on a mutable copy)`);
          else if (safeCanonical(onCopy) !== safeCanonical(step.result))
            fail(`${at}: stepping a frozen state and a mutable copy of it gave different results`);
          if (!checkedRepeat) {
            checkedRepeat = true;
            const obs1 = safeCanonical(env.observe(step.before, step.seat));
            const obs2 = safeCanonical(env.observe(mutableCopy(step.before), step.seat));
            if (obs1 !== obs2) fail(`${label}: observe gives a different observation for a copy of the same state`);
          }
        },
      );
    }),

    check(suite, 'actions of randomAction and oracle validate against the action types', async (fail) => {
      const env0 = make();
      const byseat = validators(env0);
      const visit = (mode: string) => (r: Rollout, label: string) => {
        for (const s of r.steps) {
          const err = byseat.get(s.seat)!((s.move as { action: unknown }).action);
          if (err)
            fail(
              `${label}, turn ${s.turn}, ${s.seat}: the ${mode} action ${safeCanonical((s.move as { action: unknown }).action)} is invalid: ${err}`,
            );
        }
      };
      await forEachEpisode('random', fail, visit('random'));
      if (env0.oracle) await forEachEpisode('oracle', fail, visit('oracle'));
    }),

    check(suite, 'episodes end within maxTurns', async (fail) => {
      const env0 = make();
      const visit = (r: Rollout, label: string, env: Environment) => {
        if (!r.ended) fail(`${label}: not done after ${env.maxTurns} turns of ${env.seats.length} seats`);
        r.steps.forEach((s, i) => {
          const d = s.result.done;
          if (typeof d?.terminated !== 'boolean' || typeof d?.truncated !== 'boolean')
            fail(`${label}, step ${i}: done must be { terminated: boolean, truncated: boolean }`);
          if (typeof s.result.success !== 'boolean') fail(`${label}, step ${i}: success must be a boolean`);
          if (s.result.success && !d?.terminated)
            fail(`${label}, step ${i}: success without done.terminated (a solved episode must end)`);
        });
      };
      await forEachEpisode('random', fail, visit);
      if (env0.oracle) await forEachEpisode('oracle', fail, visit);
    }),

    check(suite, 'signals are finite numbers (and the declared ones)', async (fail) => {
      const env0 = make();
      const declared = env0.signals;
      if (declared !== undefined && (!Array.isArray(declared) || declared.some((n) => typeof n !== 'string')))
        fail('signals must be a list of names');
      const visit = (r: Rollout, label: string) => {
        for (const s of r.steps) {
          const names = Object.keys(s.result.signals ?? {});
          for (const [name, v] of Object.entries(s.result.signals ?? {})) {
            if (typeof v !== 'number' || !Number.isFinite(v))
              fail(`${label}, turn ${s.turn}, ${s.seat}: signal "${name}" is ${String(v)}`);
          }
          if (Array.isArray(declared)) {
            const missing = declared.filter((n) => !names.includes(n));
            const extra = names.filter((n) => !declared.includes(n));
            if (missing.length)
              fail(`${label}, turn ${s.turn}, ${s.seat}: declared signals missing: ${missing.join(', ')}`);
            if (extra.length)
              fail(
                `${label}, turn ${s.turn}, ${s.seat}: undeclared signals: ${extra.join(', ')} (declared: ${declared.join(', ')})`,
              );
          }
        }
      };
      await forEachEpisode('random', fail, visit);
      if (env0.oracle) await forEachEpisode('oracle', fail, visit);
    }),

    check(suite, 'observations are well-formed and show the current state', async (fail) => {
      await forEachEpisode(
        'random',
        fail,
        () => undefined,
        (label, env) => (step, after) => {
          const where1 = `${label}, turn ${step.turn}, ${step.seat}`;
          const bad = validObservation(step.observation);
          if (bad) fail(`${where1}: the observation ${bad}`);
          if (safeCanonical(env.observe(step.before, step.seat)) !== safeCanonical(step.observation))
            fail(`${where1}: observe is not deterministic`);
          if (safeCanonical(after) === safeCanonical(step.before)) return;
          if (
            options.stateView &&
            safeCanonical(options.stateView(after)) !== safeCanonical(options.stateView(step.before))
          ) {
            for (const { name } of env.seats) {
              if (env.observe(after, name).state === env.observe(step.before, name).state) {
                fail(
                  `${where1}: the state view changed from ${safeCanonical(options.stateView(step.before))} to ${safeCanonical(options.stateView(after))} but seat ${name}'s state text did not — observations must render the current state`,
                );
              }
            }
          }
          const changed = env.seats.some(({ name }) => {
            const o1 = env.observe(step.before, name);
            const o2 = env.observe(after, name);
            return safeCanonical([o1.state, o1.context, o1.turn]) !== safeCanonical([o2.state, o2.context, o2.turn]);
          });
          if (!changed)
            fail(
              `${where1}: the state changed but no seat's observation (state, context, turn) did — observations must render the current state`,
            );
        },
      );
    }),
  ];

  const probe = make();
  if (typeof probe.oracle === 'function') {
    checks.push(
      check(suite, 'oracle play succeeds', async (fail) => {
        await forEachEpisode('oracle', fail, (r, label) => {
          if (!r.success) fail(`${label}: the oracle did not solve the instance within maxTurns`);
        });
      }),
    );
  }
  return checks;
}

/** The suite's title: the id, and the config when it is not empty. */
function environmentSuiteName(contribution: EnvironmentContribution, options: EnvironmentConformanceOptions): string {
  const config = options.config ?? {};
  return `environment ${contribution.id} conformance${Object.keys(config).length ? ` ${safeCanonical(config)}` : ''}`;
}

/** Registers the environment suite as mocha tests (call it at the top level of a test file). */
export function environmentConformance(
  contribution: EnvironmentContribution,
  options: EnvironmentConformanceOptions = {},
): void {
  const suite = environmentSuiteName(contribution, options);
  registerChecks(suite, () => guardedChecks(suite, () => environmentChecks(contribution, options)));
}

/** Runs the environment suite and returns every failure (empty when the environment conforms). */
export async function checkEnvironmentConformance(
  contribution: EnvironmentContribution,
  options: EnvironmentConformanceOptions = {},
): Promise<ConformanceFailure[]> {
  const suite = environmentSuiteName(contribution, options);
  return runChecks(guardedChecks(suite, () => environmentChecks(contribution, options)));
}
