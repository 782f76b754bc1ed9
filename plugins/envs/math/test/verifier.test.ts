import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { checkEquivalence, checkExact, MathVerifier, MAX_ANSWER_CHARS, type Verdict } from '../src/checker/index.js';

/** Hostile pairs (from the hardening review) and the verdicts allowed for each: never a wrong "equal". */
const HOSTILE: readonly {
  readonly name: string;
  readonly answer: string;
  readonly reference: string;
  readonly verdicts: readonly Verdict[];
}[] = [
  {
    name: 'a 60th power of a sum, operands swapped',
    answer: '(x+y)^{60}',
    reference: '(y+x)^{60}',
    verdicts: ['equal'],
  },
  {
    name: 'a 60th power against the same plus one',
    answer: '(x+y)^{60}+1',
    reference: '(y+x)^{60}',
    verdicts: ['not-equal', 'undecided'],
  },
  { name: 'a power tower that cancels', answer: '42+9^{9^{9}}-9^{9^{9}}', reference: '42', verdicts: ['undecided'] },
  { name: 'underflow is not zero', answer: '10^{-10^{10}}', reference: '0', verdicts: ['undecided', 'not-equal'] },
  { name: '1e309 is not 309·e', answer: '1e309', reference: '309e', verdicts: ['undecided', 'not-equal'] },
  { name: '1e309 is 10^309', answer: '1e309', reference: '10^{309}', verdicts: ['equal'] },
  { name: 'a huge exponent of a variable', answer: 'x^{10^{10}}', reference: '0', verdicts: ['undecided'] },
  {
    name: 'ten thousand nested braces',
    answer: `${'{'.repeat(10_000)}1${'}'.repeat(10_000)}`,
    reference: '1',
    verdicts: ['undecided'],
  },
  {
    name: 'forty nested parentheses',
    answer: `${'('.repeat(40)}x+1${')'.repeat(40)}`,
    reference: '1+x',
    verdicts: ['equal'],
  },
  {
    name: 'a 31k-digit fraction',
    answer: `\\frac{${'9'.repeat(31_000)}}{7}`,
    reference: `\\frac{${'9'.repeat(31_000)}}{8}`,
    verdicts: ['undecided'],
  },
  {
    name: 'a 3000-digit integer',
    answer: '7'.repeat(3000),
    reference: `${'7'.repeat(2999)}8`,
    verdicts: ['undecided'],
  },
  {
    name: 'a 900-element list, reordered',
    answer: Array.from({ length: 900 }, (_, k) => k).join(','),
    reference: Array.from({ length: 900 }, (_, k) => 899 - k).join(','),
    verdicts: ['equal'],
  },
  {
    name: 'a 900-element list, one changed',
    answer: Array.from({ length: 900 }, (_, k) => k).join(','),
    reference: Array.from({ length: 900 }, (_, k) => (k === 5 ? 'x' : 899 - k)).join(','),
    verdicts: ['undecided'],
  },
  { name: 'a 100k-character answer', answer: '1+'.repeat(50_000), reference: '2', verdicts: ['undecided'] },
  { name: 'a factorial tower', answer: '(10^{10})!', reference: '1', verdicts: ['undecided'] },
  { name: 'an exponential beyond doubles', answer: 'e^{1000}-e^{1000}', reference: '0', verdicts: ['undecided'] },
];

describe('checker: budget and size guards', () => {
  const verifier = new MathVerifier();
  after(() => verifier.close());

  for (const c of HOSTILE) {
    it(`${c.name}: ${c.verdicts.join(' or ')}`, async () => {
      const r = await verifier.check(c.answer, c.reference, { budgetMs: 1000 });
      assert.ok(c.verdicts.includes(r.verdict), `verdict ${r.verdict}: ${r.details}`);
      assert.equal(r.equivalent, r.verdict === 'equal');
    });
  }

  it('answers a single-value pair on the calling thread when exact layers decide it', async () => {
    const r = await verifier.check('\\frac{1}{2}', '0.5');
    assert.equal(r.thread, 'main');
    assert.equal(r.verdict, 'equal');
    assert.equal(
      checkExact('x+1', '1+x')?.verdict,
      'equal',
      'the same expression up to order is found on the calling thread',
    );
    assert.equal(
      checkExact('x^2-1', '(x-1)(x+1)'),
      undefined,
      'a pair that needs sampling or simplify is left to the full check',
    );
  });

  it('a budget too small for the symbolic layer gives undecided, and the verifier keeps answering', async () => {
    // No finite value at any point, so only simplify could decide; 1 ms is not enough for it.
    const r = await verifier.check('\\frac{x}{0}', '\\frac{1}{0}', { budgetMs: 1 });
    assert.equal(r.verdict, 'undecided', r.details);
    const next = await verifier.check('x^2-1', '(x-1)(x+1)');
    assert.equal(next.verdict, 'equal', next.details);
    assert.ok(verifier.stats.undecided >= 1);
  });

  it('the synchronous check applies the same guards', () => {
    assert.equal(checkEquivalence('42+9^{9^{9}}-9^{9^{9}}', '42').verdict, 'undecided');
    assert.equal(checkEquivalence('x'.repeat(MAX_ANSWER_CHARS + 1), 'x').verdict, 'undecided');
    assert.equal(checkEquivalence('(x+y+z)^{8}', '(x+y+z)^{4}(z+y+x)^{4}').verdict, 'equal');
  });

  it('close() answers pending checks undecided', async () => {
    const own = new MathVerifier();
    const pending = own.check('\\sin^2 x + \\cos^2 x', '1');
    await own.close();
    assert.equal((await pending).verdict, 'undecided');
  });

  it('keeps the process alive while a check waits for its worker, and never once the verifier is idle', async () => {
    // A process that checks one symbolic pair and then does nothing: it must print the verdict (a worker still
    // booting holds the process) and then exit by itself (an idle worker does not). A hang fails on mocha's timeout.
    const script = `import { sharedVerifier } from './src/checker/index.ts';
      const r = await sharedVerifier().check('(x+y)^{2}', 'x^2+2xy+y^2');
      console.log(r.verdict, r.thread);`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--conditions=troupe:source', '--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: new URL('..', import.meta.url).pathname },
    );
    assert.equal(stdout.trim(), 'equal worker');
  });
});
