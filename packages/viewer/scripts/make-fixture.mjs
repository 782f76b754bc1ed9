#!/usr/bin/env node
// Regenerates test/fixtures/run/: a three-step training run of test/fixtures/viewer-run.yaml (trace.jsonl,
// metrics.jsonl, report.md, baseline-eval.json, checkpoints without their weights) and two evaluation traces of the
// same ten test episodes under evals/ for the compare view
// (the warm start, step 0, greedy; the trained model sampling at temperature 1.2).
// Usage: npm run fixture -w @troupe/viewer   (about a minute; the run is seeded, the sampled text may still differ).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..');
const troupe = join(pkg, '..', 'cli', 'bin', 'troupe.js');
const spec = join(pkg, 'test', 'fixtures', 'viewer-run.yaml');
const out = join(pkg, 'test', 'fixtures', 'run');

function troupeCli(...args) {
  const r = spawnSync(process.execPath, [troupe, ...args], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`troupe ${args.join(' ')} exited with ${r.status}`);
}

rmSync(out, { recursive: true, force: true });
troupeCli('train', spec, '--out', out, '--no-progress');
mkdirSync(join(out, 'evals'), { recursive: true });
troupeCli(
  'eval',
  spec,
  '--checkpoint',
  join(out, 'checkpoints', 'step-0'),
  '--trace',
  join(out, 'evals', 'step-0.trace.jsonl'),
);
// the trained model sampling hot (temperature 1.2) plays other paths than the warm start's greedy ones
const hot = join(tmpdir(), `viewer-run-hot-${process.pid}.yaml`);
writeFileSync(hot, readFileSync(spec, 'utf8').replace(/temperature: [0-9.]+/, 'temperature: 1.2'));
troupeCli(
  'eval',
  hot,
  '--checkpoint',
  out,
  '--decoding',
  'spec',
  '--trace',
  join(out, 'evals', 'step-3-sampled.trace.jsonl'),
);
rmSync(hot);
copyFileSync(spec, join(out, 'spec.yaml'));
// keep each checkpoint's trainer-state.json (the viewer lists checkpoints); drop the weights and the plot images
for (const step of readdirSync(join(out, 'checkpoints'))) {
  const dir = join(out, 'checkpoints', step);
  if (!statSync(dir).isDirectory()) continue;
  for (const entry of readdirSync(dir))
    if (entry !== 'trainer-state.json') rmSync(join(dir, entry), { recursive: true, force: true });
}
rmSync(join(out, 'plots'), { recursive: true, force: true });
