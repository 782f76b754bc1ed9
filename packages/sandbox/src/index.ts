/**
 * @troupe/sandbox: isolated execution of untrusted Python and JavaScript programs.
 *
 * ```ts
 * const sandbox = new Sandbox({ concurrency: 2 });
 * const r = await sandbox.run({ language: 'python', source: 'print(input()[::-1])', stdin: 'abc\n' });
 * // r.verdict === 'ok', r.stdout === 'cba\n'
 * await sandbox.close();
 * ```
 */
export type {
  Language,
  SandboxLimits,
  Verdict,
  RunRequest,
  RunResult,
  IsolationKind,
  IsolationReport,
  SandboxOptions,
} from './types.js';
export { DEFAULT_LIMITS, MAX_LIMIT } from './types.js';
export { Sandbox, chooseIsolation, badLimitValue, unisolatedWarning } from './sandbox.js';
export { probeIsolation, describeIsolation, isolationGuarantees, removeStaleRunDirs } from './probe.js';
export { looksOutOfMemory } from './classify.js';
export { TaskPool } from './pool.js';
export {
  SharedSandboxPool,
  sharedSandboxPool,
  type SandboxSettings,
  type SharedSandboxPoolOptions,
} from './shared-pool.js';
