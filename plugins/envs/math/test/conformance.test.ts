/**
 * The @troupe/testing conformance suites: the environment (single-seat variant with the default settings, and the
 * two-seat team with the coder's programs run by python3), and the plugin module (manifest ↔ bindings ↔ schema).
 */
import { fileURLToPath } from 'node:url';
import { environmentConformance, moduleConformance } from '@troupe/testing';
import { MathEnvironmentContribution } from '../src/index.js';
import { FixedPool, LocalPythonSandbox } from './helpers/local-python.js';

environmentConformance(new MathEnvironmentContribution(), { config: { seats: ['solver'] } });
environmentConformance(new MathEnvironmentContribution(new FixedPool(new LocalPythonSandbox())), {
  config: { seats: ['coder', 'solver'], maxTurns: 2 },
  episodes: 1,
  seeds: [0],
  splitSamples: 150,
});
moduleConformance(fileURLToPath(new URL('..', import.meta.url)));
