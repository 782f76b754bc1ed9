/**
 * Model benchmark (same workload as `torch_ref.py bench`): `npx tsx --conditions=troupe:source bench/model.ts [tiny|small]`.
 * Prints one JSON line. For the comparison with PyTorch use `troupe bench model`.
 */
import { benchModel } from '@troupe/lm';

const preset = (process.argv[2] ?? 'tiny') as 'tiny' | 'small';
const r = await benchModel({ preset, steps: Number(process.env.STEPS ?? 5) });
console.log(JSON.stringify(r));
