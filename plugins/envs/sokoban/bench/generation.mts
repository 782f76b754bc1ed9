/**
 * Generation statistics: `node --conditions=troupe:source --import tsx bench/generation.mts [configJson] [count]`.
 * Prints the optimal-solution lengths of the first `count` test instances (seed 0), how many are distinct, and the
 * time taken.
 */
import { SokobanEnvironment } from '../src/index.js';

const env = new SokobanEnvironment(JSON.parse(process.argv[2] ?? '{}') as Record<string, unknown>);
const count = Number(process.argv[3] ?? 1000);
const t0 = performance.now();
const list = Array.from({ length: count }, (_, i) => env.instance('test', i, 0));
const lengths = list.map((x) => x.shortest);
const ms = performance.now() - t0;
const mean = lengths.reduce((a, b) => a + b, 0) / count;
const hist: Record<number, number> = {};
for (const l of lengths) hist[l] = (hist[l] ?? 0) + 1;
console.log(
  JSON.stringify({
    config: env.config,
    count,
    distinct: new Set(list.map((x) => env.instanceKey(x))).size,
    ms: Math.round(ms),
    min: Math.min(...lengths),
    max: Math.max(...lengths),
    mean: Number(mean.toFixed(2)),
    histogram: hist,
  }),
);
