/**
 * Fixture-driven episodes (see `fixtureEpisodes`): each folder in test/fixtures holds `case.json` (config, instance
 * as a generated one or `{ puzzle }`, scripted `fills`, `"oracle"` or `"oracle2"`, the oracle's first two fills) and
 * `expected.json` (the transcript, moves as the text the filler role writes).
 */
import { join } from 'node:path';
import { fixtureEpisodes } from '@troupe/game-kit/testing';
import type { Fill } from '../src/index.js';
import { SudokuEnvironment, makeInstance, renderFills } from '../src/index.js';

fixtureEpisodes('sudoku fixtures', join(import.meta.dirname, 'fixtures'), {
  create: (config) => new SudokuEnvironment(config),
  make: (i) => makeInstance(i.puzzle as number[][]),
  action: (step, env, state) => {
    const oracle = (): Fill[] => env.oracle!(state, step.seat as string) as Fill[];
    const fills =
      step.fills === 'oracle' ? oracle() : step.fills === 'oracle2' ? oracle().slice(0, 2) : (step.fills as Fill[]);
    return { action: fills, text: renderFills(fills) };
  },
  move: (move) => (move.kind === 'action' ? move.text : { invalid: move.error }),
});
