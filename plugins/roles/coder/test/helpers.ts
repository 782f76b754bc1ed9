/** One sandbox pool shared by the package's tests, closed after the run. */
import { after } from 'mocha';
import { SharedSandboxPool } from '@troupe/sandbox';

let pool: SharedSandboxPool | undefined;

/** The package's sandbox pool (two slots). */
export function testPool(): SharedSandboxPool {
  pool ??= new SharedSandboxPool({ concurrency: 2 });
  return pool;
}

after(async () => {
  await pool?.close();
});
