/** Test helpers: one sandbox pool shared by every test file of the package (closed after the run). */
import { after } from 'mocha';
import { SharedSandboxPool, type Sandbox } from '@troupe/sandbox';

let pool: SharedSandboxPool | undefined;

/** The package's sandbox pool (two slots). */
export function testPool(): SharedSandboxPool {
  pool ??= new SharedSandboxPool({ concurrency: 2 });
  return pool;
}

/** The pool's sandbox with default settings (bubblewrap or unshare isolation; the suite needs one, as CI has). */
export function sharedSandbox(): Sandbox {
  return testPool().runner();
}

after(async () => {
  await pool?.close();
});
