import assert from 'node:assert/strict';
import { Command, CommanderError } from 'commander';
import { register } from '../src/commands/verify.js';
import { CliError } from '../src/errors.js';

/** Runs `troupe verify ...` in-process, capturing stdout/stderr; resolves with the exit code and the output. */
async function troupe(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const program = new Command('troupe').exitOverride();
  register(program);
  program.commands.forEach(function override(cmd: Command): void {
    cmd.exitOverride();
    cmd.configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    cmd.commands.forEach(override);
  });
  let stdout = '';
  let stderr = '';
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string) => ((stdout += chunk), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => ((stderr += chunk), true)) as typeof process.stderr.write;
  const saved = process.exitCode;
  process.exitCode = undefined;
  let code: number;
  try {
    await program.parseAsync(['node', 'troupe', 'verify', ...args]);
    code = typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) code = 2;
    else if (e instanceof CliError) { code = e.exitCode; stderr += e.message; } else throw e;
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    process.exitCode = saved;
  }
  return { code, stdout, stderr };
}

describe('troupe verify math', () => {
  it('prints one JSON document and exits 0 for equivalent answers', async () => {
    const r = await troupe('math', '--answer', '\\frac{1}{2}', '--reference', '0.5', '--json');
    assert.equal(r.code, 0);
    assert.deepEqual(JSON.parse(r.stdout), { equivalent: true, layer: 'rational', details: 'equal as rationals: 1/2' });
  });

  it('exits 1 for different answers and says why', async () => {
    const r = await troupe('math', '--answer', '3.14', '--reference', '\\pi');
    assert.equal(r.code, 1);
    assert.match(r.stdout, /^not equivalent \(layer: none\): differ numerically/);
  });

  it('reports the symbolic layer in text mode', async () => {
    const r = await troupe('math', '--answer', '(x+1)^2', '--reference', 'x^2+2x+1');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^equivalent \(layer: symbolic\)/);
  });

  it('honours --ordered-lists', async () => {
    assert.equal((await troupe('math', '--answer', '2, 1', '--reference', '1, 2')).code, 0);
    assert.equal((await troupe('math', '--answer', '2, 1', '--reference', '1, 2', '--ordered-lists')).code, 1);
  });

  it('is a usage error (exit 2) without --reference or with a bad --tolerance', async () => {
    assert.equal((await troupe('math', '--answer', '1')).code, 2);
    assert.equal((await troupe('math', '--answer', '1', '--reference', '1', '--tolerance', '-1')).code, 2);
    assert.equal((await troupe('math', '--answer', '1', '--reference', '1', '--tolerance', 'abc')).code, 2);
  });
});
