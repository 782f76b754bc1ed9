/**
 * The verifier on the regression suite: `node --conditions=troupe:source --import tsx bench/verifier.bench.ts`.
 * Prints agreement per kind (false "equal" and false "not equal" apart), the slowest cases with where they ran, and
 * the cost of the calling-thread fast path against a worker round trip. The worker is booted (and mathjs warmed) first.
 */
import { performance } from 'node:perf_hooks';
import { checkEquivalence, extractAnswer, extractReference, MathVerifier } from '../src/index.js';
import { REGRESSION_CASES, type RegressionCase } from '../test/fixtures/regression-cases.js';
import { formatScores, scoreCases } from '../test/helpers/regression-score.js';

const verifier = new MathVerifier();
let t = performance.now();
await verifier.check('x+1', '1+x+0');
console.log(`worker boot (mathjs loaded and warmed in the worker): ${(performance.now() - t).toFixed(0)} ms`);

const verdicts = new Map<RegressionCase, string>();
const timings: { ms: number; thread: string; c: RegressionCase }[] = [];
for (const c of REGRESSION_CASES) {
  t = performance.now();
  const extracted = extractAnswer(c.response, 'lenient');
  const r = extracted ? await verifier.check(extracted.answer, extractReference(c.reference)) : undefined;
  timings.push({ ms: performance.now() - t, thread: r?.thread ?? 'main', c });
  verdicts.set(c, r?.verdict ?? 'not-equal');
}
const scores = scoreCases(REGRESSION_CASES, (c) => verdicts.get(c)!);
console.log(`\n${REGRESSION_CASES.length} cases (extraction + verification, lenient mode, budget 1000 ms):`);
console.log(formatScores(scores));
console.log('\nslowest cases (extraction + verification):');
for (const { ms, thread, c } of timings.sort((x, y) => y.ms - x.ms).slice(0, 5)) {
  console.log(
    `  ${ms.toFixed(1).padStart(8)} ms  ${thread.padEnd(6)} ${c.kind.padEnd(14)} ${c.response.slice(0, 50).replace(/\n/g, ' ')}`,
  );
}
const misses = REGRESSION_CASES.filter((c) => (verdicts.get(c) === 'equal') !== (c.expected === 'equal'));
console.log(`\ndisagreements (${misses.length}):`);
for (const c of misses)
  console.log(`  ${c.kind}: ${verdicts.get(c)} for expected ${c.expected}${c.miss ? ` (known: ${c.miss})` : ''}`);

// Fast path: an exact pair on the calling thread, and a symbolic pair through the worker, against the plain check.
const rounds = 200;
for (const [name, a, b] of [
  ['exact pair', '\\frac{1}{2}', '0.5'],
  ['symbolic pair', 'x^2-1', '(x-1)(x+1)'],
] as const) {
  t = performance.now();
  for (let k = 0; k < rounds; k++) await verifier.check(a, b);
  const viaVerifier = (performance.now() - t) / rounds;
  t = performance.now();
  for (let k = 0; k < rounds; k++) checkEquivalence(a, b);
  const direct = (performance.now() - t) / rounds;
  console.log(
    `${name.padEnd(14)} verifier ${viaVerifier.toFixed(3)} ms per check, checkEquivalence on this thread ${direct.toFixed(3)} ms`,
  );
}
console.log(`verifier stats: ${JSON.stringify(verifier.stats)}`);
await verifier.close();
