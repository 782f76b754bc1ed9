/** Test helpers: one sandbox shared by every test file of the package (closed after the run). */
import { after } from 'mocha';
import { Sandbox } from '@troupe/sandbox';

let sandbox: Sandbox | undefined;

/** The shared sandbox (bubblewrap or unshare isolation; the suite needs one of them, as CI has). */
export function sharedSandbox(): Sandbox {
  sandbox ??= new Sandbox({ concurrency: 2 });
  return sandbox;
}

after(async () => {
  await sandbox?.close();
});
