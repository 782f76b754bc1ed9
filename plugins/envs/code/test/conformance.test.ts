import { fileURLToPath } from 'node:url';
import { environmentConformance, moduleConformance } from '@troupe/testing';
import { CodeEnvironmentContribution } from '@troupe/env-code';
import { testPool } from './helpers.js';

// Every program runs in the real sandbox; episodes and seeds are kept small so the suite stays fast (outcomes are
// cached by content, so replays of the same episode cost nothing).
const contribution = new CodeEnvironmentContribution(testPool());
environmentConformance(contribution, { episodes: 2, seeds: [0], splitSamples: 60 });
environmentConformance(contribution, { config: { seats: ['coder'] }, episodes: 2, seeds: [0], splitSamples: 20 });
moduleConformance(fileURLToPath(new URL('..', import.meta.url)));
