import assert from 'node:assert/strict';
import { register } from '../src/commands/verify.js';
import { commandRunner } from './helpers/run-command.js';

/** Runs `troupe verify ...` in-process. */
const troupe = commandRunner(register, 'verify');

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
