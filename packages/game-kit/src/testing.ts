/**
 * `@troupe/game-kit/testing`: fixture-driven episodes for games (Babel style), shared by every game's test suite.
 * Each folder in a fixtures directory holds `case.json` (config, instance, scripted moves) and `expected.json` (the
 * transcript). {@link fixtureEpisodes} registers one mocha test per folder; run with `UPDATE_FIXTURES=1` to (re)write
 * `expected.json`, then review the diff by hand (on CI a missing file fails instead).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment, Move, Split } from '@troupe/kernel';

/** A fixture's `case.json`: `instance` is a generated one, or the game's hand-made form (read by `GameFixtures.make`). */
export interface FixtureCase {
  readonly description: string;
  readonly config: Record<string, unknown>;
  readonly instance: { readonly split: Split; readonly index: number; readonly seed: number } | Readonly<Record<string, unknown>>;
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
  action(step: Readonly<Record<string, unknown>>, env: Environment<I, S, A>, state: S): { readonly action: A; readonly text: string };
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
export async function playFixture<I, S extends { readonly turn: number }, A>(game: GameFixtures<I, S, A>, c: FixtureCase): Promise<unknown> {
  const env = game.create(c.config);
  const instance = 'split' in c.instance && typeof c.instance.split === 'string'
    ? env.instance(c.instance.split as Split, c.instance.index as number, c.instance.seed as number)
    : game.make(c.instance);
  let state = env.reset(instance);
  const transcript: unknown[] = [];
  for (const s of c.steps) {
    const obs = env.observe(state, s.seat);
    const move: Move<A> = s.invalid !== undefined ? { kind: 'invalid', error: s.invalid, text: s.invalid } : { kind: 'action', ...game.action(s, env, state) };
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
  it(title: string, fn: () => Promise<void>): unknown;
}

/** Registers `describe(title)` with one test per fixture folder in `dir` (see the module comment); run it under mocha. */
export function fixtureEpisodes<I, S extends { readonly turn: number }, A>(title: string, dir: string, game: GameFixtures<I, S, A>): void {
  const { describe, it } = globalThis as unknown as Partial<MochaGlobals>;
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new Error(`@troupe/game-kit/testing: "${title}" registers mocha tests, but mocha's describe/it globals are not defined; run it under mocha`);
  }
  describe(title, () => {
    for (const name of readdirSync(dir).sort()) {
      it(name, async () => {
        const actual = await playFixture(game, JSON.parse(readFileSync(join(dir, name, 'case.json'), 'utf8')) as FixtureCase);
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
