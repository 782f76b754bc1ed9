/** `troupe view` from the CLI: the first line of stdout is the URL; --export writes the page; bad input is one clear line. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FIXTURE_RUN } from './helpers/fixture.js';

const MAIN = join(import.meta.dirname, '..', '..', 'cli', 'src', 'main.ts');
const args = (...rest: string[]) => ['--conditions=troupe:source', '--import', 'tsx', MAIN, ...rest];

describe('troupe view (CLI)', function () {
  this.timeout(60_000);

  it('prints the URL first (--port 0 picks a free port) and serves the run until stopped', async () => {
    const child = spawn(process.execPath, args('view', FIXTURE_RUN, '--port', '0'), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const first = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`troupe view exited with ${code}`)));
      });
      assert.match(first, /^http:\/\/127\.0\.0\.1:\d+\/$/);
      assert.notEqual(first, 'http://127.0.0.1:0/');
      const overview = (await (await fetch(`${first}api/overview`)).json()) as { name: string };
      assert.equal(overview.name, 'viewer-fixture');
    } finally {
      child.kill('SIGINT');
    }
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0, 'Ctrl-C stops it cleanly');
  });

  it('--export writes one self-contained page', () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-view-cli-'));
    try {
      const file = join(dir, 'run.html');
      const r = spawnSync(process.execPath, args('view', FIXTURE_RUN, '--export', file, '--json'), {
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).omitted_episodes, 0);
      const html = readFileSync(file, 'utf8');
      assert.match(html, /<script id="troupe-snapshot" type="application\/json">/);
      assert.doesNotMatch(html, /<script src=|<link rel="stylesheet" href=/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says what to pass for a path that is not a run, without a stack trace', () => {
    const r = spawnSync(process.execPath, args('view', '/no/such/run'), { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr,
      'troupe: /no/such/run: no such file or folder; pass a run folder (troupe train --out) or a trace file (troupe eval --trace)\n',
    );
    const p = spawnSync(process.execPath, args('view', FIXTURE_RUN, '--port', '70000'), { encoding: 'utf8' });
    assert.equal(p.status, 2);
    assert.match(p.stderr, /--port must be between 0 and 65535, got 70000/);
  });
});
