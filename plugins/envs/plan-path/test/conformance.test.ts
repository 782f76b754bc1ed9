import { fileURLToPath } from 'node:url';
import { environmentConformance, moduleConformance } from '@troupe/testing';
import type { PlanPathState } from '../src/index.js';
import { PlanPathContribution } from '../src/index.js';

const contribution = new PlanPathContribution();
environmentConformance(contribution, {
  config: {},
  episodes: 4,
  seeds: [0, 1],
  splitSamples: 300,
  stateView: (s) => (s as PlanPathState).position,
});
environmentConformance(contribution, {
  config: { size: 10, reward: 'sparse', maxTurns: 2 },
  episodes: 3,
  seeds: [5],
  splitSamples: 100,
});
environmentConformance(contribution, {
  config: { size: 5, maxTurns: 2, observation: 'compact' },
  episodes: 3,
  seeds: [2],
  splitSamples: 100,
});
// The single-agent variant: one seat (the executor) plays alone.
environmentConformance(contribution, {
  config: { seats: ['executor'] },
  episodes: 4,
  seeds: [0, 1],
  splitSamples: 100,
  stateView: (s) => (s as PlanPathState).position,
});
environmentConformance(contribution, {
  config: { seats: ['executor'], size: 5, maxTurns: 2, observation: 'compact' },
  episodes: 3,
  seeds: [2],
  splitSamples: 100,
});
moduleConformance(fileURLToPath(new URL('..', import.meta.url)));
