/**
 * A child process of the folder-lock race tests: waits until the wall clock reaches argv[3] (ms since the epoch), so
 * that all children take the lock at once, then takes `<argv[2]>` and prints `took` (holding it until its stdin
 * closes) or `refused: <message>`.
 */
import { FolderLockError, lockFolder } from '../src/util/index.js';

const [dir, at] = process.argv.slice(2);
while (Date.now() < Number(at)) {
  /* spin: start together */
}
try {
  const lock = lockFolder(dir!, 'troupe train');
  process.stdout.write('took\n');
  process.stdin.resume();
  process.stdin.on('end', () => lock.release());
} catch (err) {
  if (!(err instanceof FolderLockError)) throw err;
  process.stdout.write(`refused: ${err.message}\n`);
}
