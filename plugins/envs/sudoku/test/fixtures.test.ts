/**
 * Fixture-driven episodes (Babel style): each folder in test/fixtures holds `case.json` (config, instance, scripted
 * fills) and `expected.json` (the transcript). Run with UPDATE_FIXTURES=1 to (re)write `expected.json`, then review
 * the diff by hand.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Move } from '@troupe/kernel';
import type { Fill, SudokuInstance, SudokuState } from '../src/index.js';
import { SudokuEnvironment, makeInstance, renderFills } from '../src/index.js';

interface Case {
  readonly description: string;
  readonly config: Record<string, unknown>;
  readonly instance: { split: 'train' | 'validation' | 'test'; index: number; seed: number } | { puzzle: number[][] };
  /** `oracle`: the oracle's fills; `oracle2`: its first two fills. */
  readonly steps: readonly { seat: string; fills?: Fill[] | 'oracle' | 'oracle2'; invalid?: string }[];
}

const dir = join(import.meta.dirname, 'fixtures');
const round = (x: number): number => Math.round(x * 1e9) / 1e9;

function play(c: Case): unknown {
  const env = new SudokuEnvironment(c.config);
  const instance: SudokuInstance = 'puzzle' in c.instance ? makeInstance(c.instance.puzzle) : env.instance(c.instance.split, c.instance.index, c.instance.seed);
  let state: SudokuState = env.reset(instance);
  const transcript: unknown[] = [];
  for (const s of c.steps) {
    const obs = env.observe(state, s.seat);
    let move: Move<Fill[]>;
    if (s.invalid !== undefined) move = { kind: 'invalid', error: s.invalid, text: s.invalid };
    else {
      const fills = s.fills === 'oracle' ? env.oracle(state, s.seat) as Fill[] : s.fills === 'oracle2' ? (env.oracle(state, s.seat) as Fill[]).slice(0, 2) : s.fills!;
      move = { kind: 'action', action: fills, text: renderFills(fills) };
    }
    const r = env.step(state, s.seat, move);
    transcript.push({
      seat: s.seat,
      turn: state.turn,
      observed: { state: obs.state, context: obs.context },
      move: move.kind === 'action' ? move.text : { invalid: move.error },
      signals: Object.fromEntries(Object.entries(r.signals).map(([k, v]) => [k, round(v)])),
      done: r.done,
      success: r.success,
    });
    state = r.state;
    if (r.done.terminated || r.done.truncated) break;
  }
  return { describe: env.describe(instance), transcript, final: env.observe(state, env.seats[0]!.name).state };
}

describe('sudoku fixtures', () => {
  for (const name of readdirSync(dir).sort()) {
    it(name, () => {
      const c = JSON.parse(readFileSync(join(dir, name, 'case.json'), 'utf8')) as Case;
      const actual = play(c);
      const file = join(dir, name, 'expected.json');
      if (process.env.UPDATE_FIXTURES === '1' || !existsSync(file)) {
        if (process.env.CI) assert.fail(`${file} is missing; run UPDATE_FIXTURES=1 npx mocha locally and review it`);
        writeFileSync(file, `${JSON.stringify(actual, null, 2)}\n`);
      }
      assert.deepEqual(actual, JSON.parse(readFileSync(file, 'utf8')));
    });
  }
});
