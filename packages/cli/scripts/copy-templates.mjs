#!/usr/bin/env node
// prepack: copies the repository's templates/ into this package (templates/), so that `troupe new` works from the
// published @troupe/cli. Build outputs and installed dependencies of a template are never copied.
import { cpSync, existsSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(pkg, '..', '..', 'templates');
const target = join(pkg, 'templates');
if (!existsSync(join(source, 'env', 'package.json'))) {
  console.error(`copy-templates: no templates at ${source}; run this from the Troupe repository`);
  process.exit(1);
}
rmSync(target, { recursive: true, force: true });
const skipped = new Set(['node_modules', 'dist', 'package-lock.json']);
cpSync(source, target, {
  recursive: true,
  filter: (path) => !skipped.has(basename(path)) && !path.endsWith('.tsbuildinfo') && !path.endsWith('.tgz'),
});
