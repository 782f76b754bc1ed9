#!/usr/bin/env node
// Bundles the web app (app/main.ts: Preact + htm, vega-embed) with esbuild into dist/app/app.js and app.css, the
// files `troupe view` serves and `--export` inlines. Runs in the package's build (npm run build / npm run setup).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Bundles the app into `outDir` (default dist/app); resolves to the paths written. */
export async function buildApp(outDir = join(pkg, 'dist', 'app')) {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [join(pkg, 'app', 'main.ts')],
    outfile: join(outDir, 'app.js'),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2020'],
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(join(pkg, 'app', 'style.css'), join(outDir, 'app.css'));
  return { js: join(outDir, 'app.js'), css: join(outDir, 'app.css') };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const out = await buildApp();
  console.log(`viewer app → ${out.js}`);
}
