import { fileURLToPath } from 'node:url';
import { environmentConformance, moduleConformance } from '@troupe/testing';
import type { SudokuState } from '../src/index.js';
import { SudokuContribution } from '../src/index.js';

const contribution = new SudokuContribution();
environmentConformance(contribution, {
  config: {},
  episodes: 4,
  seeds: [0, 1],
  splitSamples: 300,
  stateView: (s) => (s as SudokuState).grid,
});
environmentConformance(contribution, {
  config: { size: 9, reward: 'sparse', maxTurns: 2 },
  episodes: 2,
  seeds: [5],
  splitSamples: 20,
});
environmentConformance(contribution, {
  config: { observation: 'compact' },
  episodes: 3,
  seeds: [2],
  splitSamples: 100,
  stateView: (s) => (s as SudokuState).grid,
});
// The single-agent variant: one seat (the executor) plays alone.
environmentConformance(contribution, {
  config: { seats: ['executor'] },
  episodes: 4,
  seeds: [0, 1],
  splitSamples: 100,
  stateView: (s) => (s as SudokuState).grid,
});
environmentConformance(contribution, {
  config: { seats: ['executor'], observation: 'compact', maxTurns: 2 },
  episodes: 3,
  seeds: [3],
  splitSamples: 100,
});
// The seats answer with the completed grid (action type sudoku-grid).
environmentConformance(contribution, {
  config: { action: 'grid', observation: 'compact' },
  episodes: 4,
  seeds: [0, 1],
  splitSamples: 100,
  stateView: (s) => (s as SudokuState).grid,
});
environmentConformance(contribution, {
  config: { action: 'grid', size: 9, seats: ['executor'], maxTurns: 2 },
  episodes: 2,
  seeds: [6],
  splitSamples: 20,
});
moduleConformance(fileURLToPath(new URL('..', import.meta.url)));
