import { fileURLToPath } from 'node:url';
import { environmentConformance, moduleConformance } from '@troupe/testing';
import type { SokobanState } from '../src/index.js';
import { SokobanContribution } from '../src/index.js';

const contribution = new SokobanContribution();
environmentConformance(contribution, {
  config: {},
  episodes: 4,
  seeds: [0, 1],
  splitSamples: 300,
  stateView: (s) => (s as SokobanState).placement,
});
environmentConformance(contribution, {
  config: {
    size: 7,
    boxes: 2,
    reward: 'sparse',
    maxTurns: 2,
    deadlockTermination: false,
    floorSymbol: ' ',
    maxMoves: 40,
  },
  episodes: 3,
  seeds: [5],
  splitSamples: 60,
});
environmentConformance(contribution, {
  config: { observation: 'compact', maxMoves: 12 },
  episodes: 3,
  seeds: [2],
  splitSamples: 60,
  stateView: (s) => (s as SokobanState).placement,
});
// The single-agent variant: one seat (the executor) plays alone.
environmentConformance(contribution, {
  config: { seats: ['executor'] },
  episodes: 4,
  seeds: [0, 1],
  splitSamples: 60,
  stateView: (s) => (s as SokobanState).placement,
});
environmentConformance(contribution, {
  config: { seats: ['executor'], observation: 'compact', maxTurns: 2 },
  episodes: 3,
  seeds: [3],
  splitSamples: 60,
});
moduleConformance(fileURLToPath(new URL('..', import.meta.url)));
