/**
 * Checker speed on the equivalence table: `node --conditions=troupe:source --import tsx bench/checker.bench.ts`.
 * Prints the mean time per check, per deciding layer, after one warm-up pass.
 */
import { performance } from 'node:perf_hooks';
import { checkEquivalence, type EquivalenceLayer } from '../src/index.js';
import { TABLE } from '../test/fixtures/checker-table.js';

for (const row of TABLE) checkEquivalence(row.answer, row.reference); // warm-up (mathjs compiles its rules)
const byLayer = new Map<EquivalenceLayer, number[]>();
const rounds = 3;
const started = performance.now();
for (let r = 0; r < rounds; r++) {
  for (const row of TABLE) {
    const t = performance.now();
    const result = checkEquivalence(row.answer, row.reference);
    const list = byLayer.get(result.layer) ?? [];
    list.push(performance.now() - t);
    byLayer.set(result.layer, list);
  }
}
const total = performance.now() - started;
console.log(
  `${TABLE.length * rounds} checks in ${total.toFixed(0)} ms: ${(total / (TABLE.length * rounds)).toFixed(2)} ms per check`,
);
for (const [layer, times] of byLayer) {
  const mean = times.reduce((s, x) => s + x, 0) / times.length;
  console.log(
    `  ${layer.padEnd(18)} ${String(times.length).padStart(4)} checks  mean ${mean.toFixed(2)} ms  max ${Math.max(...times).toFixed(1)} ms`,
  );
}
