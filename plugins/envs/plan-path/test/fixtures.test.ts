/**
 * Fixture-driven episodes (see `fixtureEpisodes`): each folder in test/fixtures holds `case.json` (config, instance
 * as a generated one or `{ grid, start, goal }`, scripted `moves` or `"oracle"`) and `expected.json` (the transcript).
 */
import type { Direction, Pos } from '../src/index.js';
import { PlanPathEnvironment, makeInstance, type PlanPathState } from '../src/index.js';
import { join } from 'node:path';
import { fixtureEpisodes } from '@troupe/game-kit/testing';

fixtureEpisodes('plan-path fixtures', join(import.meta.dirname, 'fixtures'), {
  create: (config) => new PlanPathEnvironment(config),
  make: (i) => makeInstance(i.grid as string[], i.start as Pos, i.goal as Pos),
  action: (step, env, state) => {
    const moves = step.moves === 'oracle' ? env.oracle!(state, step.seat as string) : (step.moves as Direction[]);
    return { action: moves, text: `#### [${moves.join(',')}]` };
  },
  view: (s: PlanPathState) => ({ position: s.position, movesUsed: s.movesUsed }),
});
