#!/usr/bin/env node
// The `troupe` command. Runs the built CLI (dist/); inside the repository, when dist/ is missing or
// TROUPE_FROM_SOURCE=1, it re-runs itself from the TypeScript sources through tsx.
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const built = join(here, '..', 'dist', 'main.js');
const source = join(here, '..', 'src', 'main.ts');
const fromSource = process.env.TROUPE_FROM_SOURCE === '1' || !existsSync(built);

if (!fromSource) {
  const { main } = await import(pathToFileURL(built).href);
  process.exitCode = await main(process.argv);
} else if (existsSync(source)) {
  const tsx = import.meta.resolve('tsx');
  const child = spawn(
    process.execPath,
    ['--conditions=troupe:source', '--import', tsx, source, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  // Ctrl-C (SIGINT) and a hang-up reach the whole process group, the CLI that does the work included: wait for it.
  // SIGTERM (kill PID, a supervisor) is sent to this process alone: pass it on.
  const ignore = () => undefined;
  const forward = () => child.kill('SIGTERM');
  process.on('SIGINT', ignore).on('SIGHUP', ignore).on('SIGTERM', forward);
  child.on('exit', (code, signal) => {
    process.off('SIGINT', ignore).off('SIGHUP', ignore).off('SIGTERM', forward);
    if (signal)
      process.kill(process.pid, signal); // end the way the child ended
    else process.exitCode = code ?? 1;
  });
} else {
  console.error(
    'troupe: the CLI is not built (missing dist/main.js). Run `npm run build` in the repository, or reinstall @troupe/cli.',
  );
  process.exitCode = 1;
}
