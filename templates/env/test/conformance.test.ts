/**
 * The conformance suite every Troupe environment runs (like Gymnasium's check_env): seeded generation, disjoint
 * splits, immutable states, observations of the current state, finite signals, the oracle solving instances.
 */
import { fileURLToPath } from 'node:url';
import { environmentConformance, moduleConformance } from '@troupe/testing';
import { CorridorContribution } from '../src/environment.js';

environmentConformance(new CorridorContribution(), { config: {} });
environmentConformance(new CorridorContribution(), {
  config: { minLength: 6, maxLength: 8, maxTurns: 2, reward: 'sparse', observation: 'compact' },
});
// The single-agent variant: the executor plays alone.
environmentConformance(new CorridorContribution(), { config: { seats: ['executor'] } });

// The package as the kernel loads it: manifest, kernel range, and the module binding exactly what it declares.
moduleConformance(fileURLToPath(new URL('..', import.meta.url)), { fromSource: true });
