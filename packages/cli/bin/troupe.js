#!/usr/bin/env node
// The `troupe` command. Runs the built CLI (dist/); inside the repository, when dist/ is missing or
// TROUPE_FROM_SOURCE=1, it re-runs itself from the TypeScript sources through tsx.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
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
  const result = spawnSync(
    process.execPath,
    ['--conditions=troupe:source', '--import', tsx, source, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exitCode = result.status ?? 1;
} else {
  console.error(
    'troupe: the CLI is not built (missing dist/main.js). Run `npm run build` in the repository, or reinstall @troupe/cli.',
  );
  process.exitCode = 1;
}
