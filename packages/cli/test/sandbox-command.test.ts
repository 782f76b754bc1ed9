import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { register } from '../src/commands/sandbox.js';
import { commandRunner } from './helpers/run-command.js';

/** Runs `troupe sandbox ...` in-process. */
const troupe = commandRunner(register, 'sandbox');

describe('troupe sandbox run', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'troupe-cli-sbx-'));
    writeFileSync(path.join(dir, 'rev.py'), 'print(input()[::-1])');
    writeFileSync(path.join(dir, 'in.txt'), 'abc\n');
    writeFileSync(path.join(dir, 'loop.js'), 'for (;;) {}');
    writeFileSync(path.join(dir, 'prog.txt'), 'console.log(1 + 1)');
    writeFileSync(path.join(dir, 'fail.py'), 'import sys\nprint("bad", file=sys.stderr)\nsys.exit(4)');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the RunResult as one JSON document and exits 0 when ok', async () => {
    const r = await troupe('run', path.join(dir, 'rev.py'), '--stdin', path.join(dir, 'in.txt'), '--json');
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { verdict: string; stdout: string; exitCode: number; isolation: string };
    assert.equal(result.verdict, 'ok');
    assert.equal(result.stdout, 'cba\n');
    assert.equal(result.exitCode, 0);
    assert.notEqual(result.isolation, 'none');
  });

  it('exits 1 on a timeout, and passes the program output through without --json', async () => {
    const t = await troupe('run', path.join(dir, 'loop.js'), '--timeout-ms', '1000', '--json');
    assert.equal(t.code, 1);
    assert.equal(JSON.parse(t.stdout).verdict, 'timeout');
    const f = await troupe('run', path.join(dir, 'fail.py'));
    assert.equal(f.code, 1);
    assert.match(f.stderr, /bad\n/);
    assert.match(f.stderr, /runtime-error \(exit 4/);
  });

  it('takes the language from --lang when the extension does not tell', async () => {
    const r = await troupe('run', path.join(dir, 'prog.txt'), '--lang', 'js', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).stdout, '2\n');
  });

  it('exits 2 on usage errors, naming the problem', async () => {
    const a = await troupe('run', path.join(dir, 'prog.txt'));
    assert.equal(a.code, 2);
    assert.match(a.stderr, /--lang/);
    const b = await troupe('run', path.join(dir, 'missing.py'));
    assert.equal(b.code, 2);
    assert.match(b.stderr, /missing\.py: no such file/);
    const c = await troupe('run', path.join(dir, 'rev.py'), '--lang', 'ruby');
    assert.equal(c.code, 2);
    const d = await troupe('run', path.join(dir, 'rev.py'), '--timeout-ms', 'soon');
    assert.equal(d.code, 2);
    const e = await troupe('run', path.join(dir, 'rev.py'), '--isolation', 'docker');
    assert.equal(e.code, 2);
    assert.match(e.stderr, /--isolation must be one of auto, bwrap, unshare, none/);
  });

  it('refuses limits above 2^31 - 1 (they used to turn every run into a 15 ms timeout)', async () => {
    for (const value of ['2147483648', '1e400', 'Infinity', '99999999999999999999']) {
      const r = await troupe('run', path.join(dir, 'rev.py'), '--timeout-ms', value);
      assert.equal(r.code, 2, value);
      assert.match(
        r.stderr,
        new RegExp(
          `--timeout-ms must be a positive integer no larger than 2147483647 \\(2\\^31 - 1\\), got "${value}"`,
        ),
      );
    }
    const m = await troupe('run', path.join(dir, 'rev.py'), '--memory-mb', '4294967296');
    assert.equal(m.code, 2);
    assert.match(m.stderr, /--memory-mb must be a positive integer no larger than 2147483647/);
  });

  it('refuses a FIFO or device as --stdin or FILE instead of hanging on it', async () => {
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const a = await troupe('run', path.join(dir, 'rev.py'), '--stdin', fifo);
    assert.equal(a.code, 2);
    assert.match(a.stderr, /--stdin .*fifo: not a regular file/);
    const b = await troupe('run', '/dev/zero', '--lang', 'python');
    assert.equal(b.code, 2);
    assert.match(b.stderr, /FILE \/dev\/zero: not a regular file/);
  });

  it('started from a shell holding a directory open on fd 20, the program cannot fchdir out', () => {
    const probe = path.join(dir, 'fchdir.py');
    writeFileSync(
      probe,
      'import os, stat\nprint(stat.S_ISDIR(os.fstat(20).st_mode))\ntry:\n    os.fchdir(20); os.chdir(".."); print("ESCAPED", os.listdir("."))\nexcept OSError as e:\n    print("blocked", e.errno)',
    );
    const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
    const cmd = `exec 20<${JSON.stringify(dir)}; exec ${JSON.stringify(process.execPath)} --conditions=troupe:source --import tsx ${JSON.stringify(main)} sandbox run --json ${JSON.stringify(probe)}`;
    const out = execFileSync('bash', ['-c', cmd], { encoding: 'utf8' });
    const r = JSON.parse(out) as { verdict: string; stdout: string; isolation: string };
    assert.equal(r.verdict, 'ok');
    assert.equal(r.stdout, 'False\nblocked 20\n', `under ${r.isolation}`);
  });
});
