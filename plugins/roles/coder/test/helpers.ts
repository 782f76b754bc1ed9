/** One sandbox shared by the package's tests, closed after the run. */
import { after } from 'mocha';
import { Sandbox } from '@troupe/sandbox';

let sandbox: Sandbox | undefined;

/** The shared sandbox. */
export function sharedSandbox(): Sandbox {
  sandbox ??= new Sandbox({ concurrency: 2 });
  return sandbox;
}

after(async () => {
  await sandbox?.close();
});
