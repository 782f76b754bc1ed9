/**
 * `troupe serve` under load: writes a randomly initialised `tiny`-preset checkpoint to /tmp, starts the CLI's server on
 * a free port, and has CLIENTS concurrent clients (the official `openai` client) send REQUESTS chat completions each,
 * back to back (MAX_TOKENS new tokens, temperature 1, a distinct seed per request). Reports errors, p50/p99/max
 * latency per request, requests/s and completion tokens/s over the whole run, and the queue depth
 * (`max_waiting_seen`: the deepest queue its /health reported, sampled every 20 ms). Exits 1 on any error.
 * Run (repository root): node --conditions=troupe:source --import tsx bench/serve.ts [clients=32] [requests=20] [maxTokens=32] [maxBatch=32]
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import { CausalLM, initBackend, presetHfConfig, writeCheckpoint } from '@troupe/lm';

const [CLIENTS, REQUESTS, MAX_TOKENS, MAX_BATCH] = [32, 20, 32, 32].map((d, i) => Number(process.argv[2 + i] ?? d)) as [
  number,
  number,
  number,
  number,
];
const dir = join(tmpdir(), 'troupe-bench-serve');
rmSync(dir, { recursive: true, force: true });

await initBackend();
const cfg = presetHfConfig('tiny');
const model = CausalLM.random(cfg, 0);
await writeCheckpoint(dir, cfg, model.exportTensors());
model.dispose();

const server = spawn(
  process.execPath,
  [
    '--conditions=troupe:source',
    '--import',
    'tsx',
    'packages/cli/src/main.ts',
    'serve',
    '--model',
    dir,
    '--tokenizer',
    'tiny',
    '--port',
    '0',
    '--served-model-name',
    'tiny',
    '--max-batch',
    String(MAX_BATCH),
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const first = await new Promise<string>((resolve, reject) => {
  createInterface({ input: server.stdout! }).once('line', resolve);
  server.once('exit', (code) => reject(new Error(`troupe serve exited ${code}`)));
});
const url = /listening on (\S+)/.exec(first)![1]!;
console.log(first);

const client = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0, timeout: 600_000 });
const latencies: number[] = [];
let tokens = 0;
let errors = 0;
let maxWaiting = 0;
let polling = true;
const poll = (async () => {
  while (polling) {
    const h = (await (await fetch(url.replace(/\/v1$/, '/health'))).json()) as { waiting: number };
    maxWaiting = Math.max(maxWaiting, h.waiting);
    await new Promise((r) => setTimeout(r, 20));
  }
})();

const t0 = performance.now();
await Promise.all(
  Array.from({ length: CLIENTS }, async (_, c) => {
    for (let r = 0; r < REQUESTS; r++) {
      const start = performance.now();
      try {
        const res = await client.chat.completions.create({
          model: 'tiny',
          messages: [{ role: 'user', content: `client ${c} request ${r}: plan a path` }],
          max_tokens: MAX_TOKENS,
          temperature: 1,
          seed: c * 1000 + r,
        });
        tokens += res.usage?.completion_tokens ?? 0;
        latencies.push(performance.now() - start);
      } catch (err) {
        errors++;
        console.error(`client ${c} request ${r}: ${(err as Error).message}`);
      }
    }
  }),
);
const wall = (performance.now() - t0) / 1000;
polling = false;
await poll;
server.kill('SIGTERM');

latencies.sort((a, b) => a - b);
const q = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
console.log(
  JSON.stringify(
    {
      clients: CLIENTS,
      max_batch: MAX_BATCH,
      requests_per_client: REQUESTS,
      max_tokens: MAX_TOKENS,
      requests: CLIENTS * REQUESTS,
      errors,
      wall_s: +wall.toFixed(2),
      p50_ms: +q(0.5).toFixed(1),
      p99_ms: +q(0.99).toFixed(1),
      max_ms: +(latencies.at(-1) ?? NaN).toFixed(1),
      requests_per_s: +(latencies.length / wall).toFixed(2),
      completion_tokens: tokens,
      tokens_per_s: +(tokens / wall).toFixed(1),
      max_waiting_seen: maxWaiting,
    },
    null,
    2,
  ),
);
process.exitCode = errors > 0 ? 1 : 0;
