import assert from 'node:assert/strict';
import { register } from '../src/commands/verify.js';
import { commandRunner } from './helpers/run-command.js';

/** Runs `troupe verify ...` in-process. */
const troupe = commandRunner(register, 'verify');

describe('troupe verify math', () => {
  it('prints one JSON document and exits 0 for equivalent answers', async () => {
    const r = await troupe('math', '--answer', '\\frac{1}{2}', '--reference', '0.5', '--json');
    assert.equal(r.code, 0);
    const out = JSON.parse(r.stdout);
    assert.equal(typeof out.elapsedMs, 'number');
    delete out.elapsedMs;
    assert.deepEqual(out, {
      equivalent: true,
      verdict: 'equal',
      layer: 'rational',
      details: 'equal as rationals: 1/2',
      extracted: { answer: '\\frac{1}{2}', source: 'bare' },
      reference: '0.5',
    });
  });

  it('reads the final answer out of a whole response and the reference out of a solution', async () => {
    const response =
      '<think>maybe \\boxed{7}?</think>\nWe add: $3+4=7$, then double it.\n\nThe final answer is $14{,}916$. I hope it is correct.';
    const r = await troupe('math', '--answer', response, '--reference', 'So 2 * 7458 = 14916\n#### 14,916', '--json');
    assert.equal(r.code, 0, r.stdout);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.extracted, { answer: '14{,}916', source: 'final-answer' });
    assert.equal(out.reference, '14916');
    const boxed = await troupe('math', '--answer', response, '--reference', '14916', '--extraction', 'boxed');
    assert.equal(boxed.code, 1);
    assert.match(boxed.stdout, /no answer found/);
  });

  it('answers hostile pairs within the budget: undecided or the right verdict, never a wrong "equal"', async () => {
    const cases: [string, string, string][] = [
      ['(x+y)^{60}', '(y+x)^{60}', 'equal'],
      ['42+9^{9^{9}}-9^{9^{9}}', '42', 'undecided'],
      ['10^{-10^{10}}', '0', 'undecided'],
      ['1e309', '309e', 'undecided'],
    ];
    for (const [answer, reference, verdict] of cases) {
      const r = await troupe('math', '--answer', answer, '--reference', reference, '--json', '--budget-ms', '1000');
      assert.equal(JSON.parse(r.stdout).verdict, verdict, `${answer} vs ${reference}: ${r.stdout}`);
    }
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
    assert.equal((await troupe('math', '--answer', '1', '--reference', '1', '--budget-ms', '0')).code, 2);
    assert.equal((await troupe('math', '--answer', '1', '--reference', '1', '--budget-ms', '99999999999')).code, 2);
    assert.equal((await troupe('math', '--answer', '1', '--reference', '1', '--extraction', 'loose')).code, 2);
  });
});
