/**
 * `@troupe/game-kit/testing`: the tests every proposer/executor game's suite shares.
 * - {@link fixtureEpisodes}: fixture-driven episodes (Babel style). Each folder in a fixtures directory holds
 *   `case.json` (config, instance, scripted moves) and `expected.json` (the transcript); one mocha test per folder.
 *   Run with `UPDATE_FIXTURES=1` to (re)write `expected.json`, then review the diff by hand (on CI a missing file
 *   fails instead).
 * - {@link teamEpisodes}: the game played the way the kernel plays it (observe → role prompt → text → role parse →
 *   step → reward terms), with the oracle spoken through the role, with unparseable text, and the signals checked.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type {
  Environment,
  Move,
  Observation,
  RewardFunction,
  Role,
  SeatContext,
  Split,
  Transition,
} from '@troupe/kernel';
import { createRng } from '@troupe/kernel';
import { GAME_SIGNALS } from './game.js';

/** A fixture's `case.json`: `instance` is a generated one, or the game's hand-made form (read by `GameFixtures.make`). */
export interface FixtureCase {
  readonly description: string;
  readonly config: Record<string, unknown>;
  readonly instance:
    { readonly split: Split; readonly index: number; readonly seed: number } | Readonly<Record<string, unknown>>;
  /** The scripted moves: `invalid` (unparseable text with that error), or the game's action (see `GameFixtures.action`). */
  readonly steps: readonly ({ readonly seat: string; readonly invalid?: string } & Readonly<Record<string, unknown>>)[];
}

/** What a game's fixtures need: its environment, its hand-made instances, its scripted actions and its state view. */
export interface GameFixtures<I, S, A> {
  /** The environment for a case's config. */
  create(config: Record<string, unknown>): Environment<I, S, A>;
  /** A hand-made instance from a case's `instance` (one without `split`). */
  make(instance: Readonly<Record<string, unknown>>): I;
  /** The action of a scripted step (which may ask for the oracle's), and the text a role would have written. */
  action(
    step: Readonly<Record<string, unknown>>,
    env: Environment<I, S, A>,
    state: S,
  ): { readonly action: A; readonly text: string };
  /** How the transcript shows a played move. Default: the action, or `{ invalid: error }`. */
  move?(move: Move<A>): unknown;
  /** The state fields each transcript entry shows after the step (e.g. the position and the moves used). */
  view?(state: S): Record<string, unknown>;
}

const round = (x: number): number => Math.round(x * 1e9) / 1e9;

/**
 * Plays a case: for each step, the observation before it, the move, the game's view of the state after it, the
 * signals (rounded to 9 decimals), `done` and `success`; it stops when the episode ends. Returns `describe` of the
 * instance, the transcript, and the final state text of the first seat.
 */
export async function playFixture<I, S extends { readonly turn: number }, A>(
  game: GameFixtures<I, S, A>,
  c: FixtureCase,
): Promise<unknown> {
  const env = game.create(c.config);
  const instance =
    'split' in c.instance && typeof c.instance.split === 'string'
      ? env.instance(c.instance.split as Split, c.instance.index as number, c.instance.seed as number)
      : game.make(c.instance);
  let state = env.reset(instance);
  const transcript: unknown[] = [];
  for (const s of c.steps) {
    const obs = env.observe(state, s.seat);
    const move: Move<A> =
      s.invalid !== undefined
        ? { kind: 'invalid', error: s.invalid, text: s.invalid }
        : { kind: 'action', ...game.action(s, env, state) };
    const r = await env.step(state, s.seat, move);
    transcript.push({
      seat: s.seat,
      turn: state.turn,
      observed: { state: obs.state, context: obs.context },
      move: game.move ? game.move(move) : move.kind === 'action' ? move.action : { invalid: move.error },
      ...game.view?.(r.state),
      signals: Object.fromEntries(Object.entries(r.signals).map(([k, v]) => [k, round(v)])),
      done: r.done,
      success: r.success,
    });
    state = r.state;
    if (r.done.terminated || r.done.truncated) break;
  }
  return { describe: env.describe(instance), transcript, final: env.observe(state, env.seats[0]!.name).state };
}

interface MochaGlobals {
  describe(title: string, fn: () => void): unknown;
  it(title: string, fn: () => void | Promise<void>): unknown;
}

/** Mocha's `describe` and `it`, or an error naming the suite when they are not defined. */
function mocha(title: string): MochaGlobals {
  const { describe, it } = globalThis as unknown as Partial<MochaGlobals>;
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new Error(
      `@troupe/game-kit/testing: "${title}" registers mocha tests, but mocha's describe/it globals are not defined; run it under mocha`,
    );
  }
  return { describe, it };
}

/** Registers `describe(title)` with one test per fixture folder in `dir` (see the module comment); run it under mocha. */
export function fixtureEpisodes<I, S extends { readonly turn: number }, A>(
  title: string,
  dir: string,
  game: GameFixtures<I, S, A>,
): void {
  const { describe, it } = mocha(title);
  describe(title, () => {
    for (const name of readdirSync(dir).sort()) {
      it(name, async () => {
        const actual = await playFixture(
          game,
          JSON.parse(readFileSync(join(dir, name, 'case.json'), 'utf8')) as FixtureCase,
        );
        const file = join(dir, name, 'expected.json');
        if (process.env.UPDATE_FIXTURES === '1' || !existsSync(file)) {
          if (process.env.CI) assert.fail(`${file} is missing; run UPDATE_FIXTURES=1 npx mocha locally and review it`);
          writeFileSync(file, `${JSON.stringify(actual, null, 2)}\n`);
        }
        assert.deepEqual(actual, JSON.parse(readFileSync(file, 'utf8')));
      });
    }
  });
}

/** What one played episode left: every observation, every transition, and the last state. */
export interface PlayedTeam<S> {
  readonly observations: Observation[];
  readonly transitions: Transition[];
  readonly state: S;
}

/**
 * Plays test instance `index` (seed 11) the way the kernel does: each seat observes, `speak` gives its text, the role
 * parses it, the environment steps; until the episode ends. Asserts that every prompt shows the current state.
 */
export function playTeam<S extends { readonly done: boolean }>(
  env: Environment<unknown, S, unknown>,
  role: Role,
  seatOf: (seat: string) => SeatContext,
  index: number,
  speak: (state: S, seat: string) => string,
): PlayedTeam<S> {
  let state = env.reset(env.instance('test', index, 11));
  const observations: Observation[] = [];
  const transitions: Transition[] = [];
  for (let turn = 0; turn < env.maxTurns; turn++) {
    for (const { name } of env.seats) {
      const obs = env.observe(state, name);
      observations.push(obs);
      assert.ok(
        role.prompt(obs, seatOf(name)).some((m) => m.content.includes(obs.state)),
        'the prompt shows the current state',
      );
      const move = role.parse(speak(state, name), seatOf(name)) as Move;
      const result = env.step(state, name, move);
      if ('then' in result) throw new Error(`${env.id}: playTeam plays games whose step is synchronous`);
      transitions.push({ seat: name, turn, before: state, move, result });
      state = result.state;
      if (result.done.terminated || result.done.truncated) return { observations, transitions, state };
    }
  }
  return { observations, transitions, state };
}

/** What {@link teamEpisodes} checks a game with. */
export interface TeamEpisodes<S> {
  /** The environment (default config). */
  readonly env: Environment<unknown, S, unknown>;
  /** The role both seats play (it renders the oracle's actions and parses every text). */
  readonly role: Role;
  /** The seat context of a seat (its action type). */
  readonly seatOf: (seat: string) => SeatContext;
  /** The reward: `team` the executed reward, each seat's `local` its own (`proposal_reward`, `executed_reward`). */
  readonly reward: RewardFunction;
  /** Checks the executed reward of one-turn oracle play (e.g. above the goal bonus). */
  readonly oracleReward: (local: number) => void;
  /** The reward of unparseable text (the game's malformed penalty). */
  readonly malformedReward: number;
  /** Where things are in a state (unparseable text must never change it). */
  readonly where: (state: S) => unknown;
  /** Some unparseable text. */
  readonly nonsense: string;
}

/**
 * Registers the team checks every proposer/executor game shares (see the module comment): the oracle, spoken through
 * the role after some reasoning, solves each of 20 test instances in one turn, with the same simulated and executed
 * reward; unparseable text costs the malformed penalty, changes nothing and runs to truncation; every step returns
 * exactly the game kit's signals. Returns a random and an oracle episode for the role and reward conformance suites.
 */
export function teamEpisodes<S extends { readonly done: boolean; readonly success: boolean }>(
  title: string,
  t: TeamEpisodes<S>,
): { sample: PlayedTeam<S>; oracle: PlayedTeam<S> } {
  const { describe, it } = mocha(title);
  const { env, role, seatOf, reward } = t;
  const render = (action: unknown, seat: string): string => role.render(action, seatOf(seat));
  const rng = createRng(9);
  const sample = playTeam(env, role, seatOf, 1, (s, seat) => render(env.randomAction!(s, seat, rng), seat));
  const oracle = playTeam(env, role, seatOf, 1, (s, seat) => render(env.oracle!(s, seat), seat));
  describe(title, () => {
    it('the oracle, spoken through the role after some reasoning, solves every test instance in one turn', () => {
      for (let i = 0; i < 20; i++) {
        const { transitions, state } = playTeam(
          env,
          role,
          seatOf,
          i,
          (s, seat) => `Let me think.\n${render(env.oracle!(s, seat), seat)}`,
        );
        assert.equal(state.success, true);
        assert.equal(transitions.length, 2);
        const [p, e] = transitions.map((tr) => reward.terms(tr));
        assert.equal(p!.local, e!.local, 'the simulated reward is the executed one');
        assert.equal(p!.team, 0);
        assert.equal(e!.team, e!.local);
        t.oracleReward(e!.local!);
      }
    });

    it('unparseable text costs the malformed penalty, changes nothing, and runs to truncation', () => {
      const { transitions, state } = playTeam(env, role, seatOf, 0, () => t.nonsense);
      assert.equal(transitions.length, 2 * env.maxTurns);
      assert.equal(state.done && !state.success, true);
      assert.deepEqual(t.where(state), t.where(env.reset((transitions[0]!.before as { instance: unknown }).instance)));
      for (const tr of transitions) assert.equal(reward.terms(tr).local, t.malformedReward);
    });

    it("every step returns exactly the game kit's signals", () => {
      for (const tr of [...sample.transitions, ...oracle.transitions])
        assert.deepEqual(Object.keys(tr.result.signals).sort(), [...GAME_SIGNALS].sort());
    });
  });
  return { sample, oracle };
}
