/**
 * Fixture-driven episodes (see `fixtureEpisodes`): each folder in test/fixtures holds `case.json` (config, instance
 * as a generated one or `{ picture }`, scripted `moves` or `"oracle"`) and `expected.json` (the transcript).
 */
import { join } from 'node:path';
import { fixtureEpisodes } from '@troupe/game-kit/testing';
import type { Direction } from '../src/index.js';
import { SokobanEnvironment, parseInstance, type SokobanState } from '../src/index.js';

fixtureEpisodes('sokoban fixtures', join(import.meta.dirname, 'fixtures'), {
  create: (config) => new SokobanEnvironment(config),
  make: (i) => parseInstance(i.picture as string[]),
  action: (step, env, state) => {
    const moves = step.moves === 'oracle' ? env.oracle!(state, step.seat as string) : (step.moves as Direction[]);
    return { action: moves, text: `#### [${moves.join(',')}]` };
  },
  view: (s: SokobanState) => ({ placement: s.placement, movesUsed: s.movesUsed }),
});
