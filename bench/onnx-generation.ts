/**
 * Generation speed of real-size checkpoints through ONNX Runtime against PyTorch on the same machine: runs
 * `troupe bench model --model DIR --runtime onnx --json` (ONNX Runtime on every core; PyTorch at 1 and 2 threads on
 * the same checkpoint, 16-token prompt, 32 new tokens per row, batch 1 and 8) `--repeat` times per folder, notes the
 * 1-minute load average before each run (a shared machine slows both sides), and prints the best of the runs for
 * each figure as JSON lines, then a table.
 * Run: npx tsx --conditions=troupe:source bench/onnx-generation.ts DIR... [--repeat 2]
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const r = args.indexOf('--repeat');
const repeat = r >= 0 ? Number(args.splice(r, 2)[1]) : 2;
if (args.length === 0 || !(repeat >= 1)) {
  process.stderr.write('usage: bench/onnx-generation.ts DIR... [--repeat N]\n');
  process.exit(2);
}
const cli = fileURLToPath(new URL('../packages/cli/bin/troupe.js', import.meta.url));
const load = (): number => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
const KEYS = ['gen_tokens_per_s_b1', 'gen_tokens_per_s_b8'] as const;

interface Best {
  onnx: Record<string, number>;
  torch1: Record<string, number>;
  torch2: Record<string, number>;
  loads: number[];
  rss: number;
  load_s: number;
  params: number;
}

const rows: [string, Best][] = [];
for (const dir of args) {
  const best: Best = { onnx: {}, torch1: {}, torch2: {}, loads: [], rss: 0, load_s: Infinity, params: 0 };
  for (let i = 0; i < repeat; i++) {
    const before = load();
    const out = execFileSync(process.execPath, [cli, 'bench', 'model', '--model', dir, '--runtime', 'onnx', '--json'], {
      env: { ...process.env, TROUPE_FROM_SOURCE: '1' },
      maxBuffer: 16 << 20,
    }).toString();
    const res = JSON.parse(out) as Record<string, unknown>;
    const torch = (res.torch as { by_threads: Record<string, Record<string, number>> } | null)?.by_threads;
    best.loads.push(before);
    best.params = Number(res.params);
    best.rss = Math.max(best.rss, Number(res.peak_rss_mb));
    best.load_s = Math.min(best.load_s, Number(res.load_s));
    for (const k of KEYS) {
      best.onnx[k] = Math.max(best.onnx[k] ?? 0, Number(res[k]));
      if (torch?.['1']) best.torch1[k] = Math.max(best.torch1[k] ?? 0, torch['1'][k]!);
      if (torch?.['2']) best.torch2[k] = Math.max(best.torch2[k] ?? 0, torch['2'][k]!);
    }
    process.stdout.write(JSON.stringify({ dir, run: i + 1, load_avg_before: before, ...res }) + '\n');
  }
  rows.push([dir, best]);
}
const f = (x: number | undefined): string => (x === undefined ? '—' : x.toFixed(2)).padStart(8);
process.stdout.write(`\nbest of ${repeat} (tokens/s; torch at 1 and 2 threads; ratio = onnx / faster torch)\n`);
process.stdout.write(
  `${'checkpoint'.padEnd(28)}  params  load avg     onnx b1 torch1 b1 torch2 b1  ratio   onnx b8 torch1 b8 torch2 b8  ratio  load s  RSS MiB\n`,
);
for (const [dir, b] of rows) {
  const ratio = (k: (typeof KEYS)[number]): number => b.onnx[k]! / Math.max(b.torch1[k] ?? 0, b.torch2[k] ?? 0);
  process.stdout.write(
    `${dir.slice(-28).padEnd(28)} ${(b.params / 1e6).toFixed(0).padStart(6)}M ${b.loads
      .map((l) => l.toFixed(1))
      .join('/')
      .padStart(9)} ` +
      `${f(b.onnx.gen_tokens_per_s_b1)} ${f(b.torch1.gen_tokens_per_s_b1)} ${f(b.torch2.gen_tokens_per_s_b1)} ${f(ratio('gen_tokens_per_s_b1'))}  ` +
      `${f(b.onnx.gen_tokens_per_s_b8)} ${f(b.torch1.gen_tokens_per_s_b8)} ${f(b.torch2.gen_tokens_per_s_b8)} ${f(ratio('gen_tokens_per_s_b8'))} ` +
      `${f(b.load_s)} ${b.rss.toFixed(0).padStart(8)}\n`,
  );
}
