/**
 * `troupe bench model --model DIR`: a saved checkpoint's load time, peak RSS and sampling tokens/s, and PyTorch's on
 * the same checkpoint. Values are checked for shape and sign only: speed belongs in benchmarks, not tests. The torch
 * part runs when a Python with torch is found (TROUPE_TORCH_PYTHON, /usr/bin/python3, python3); otherwise it prints why.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CausalLM, findTorchPython, saveCheckpoint } from '@troupe/lm';
import { register } from '../src/commands/bench.js';
import { commandRunner } from './helpers/run-command.js';

const troupe = commandRunner(register, 'bench');
/** A small GQA, tied-embedding config: fast to load and sample. */
const CFG = {
  model_type: 'qwen3',
  vocab_size: 256,
  hidden_size: 64,
  intermediate_size: 128,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
  tie_word_embeddings: true,
};

function assertPositive(block: Record<string, unknown>, keys: readonly string[], what: string): void {
  for (const k of keys) {
    const v = block[k];
    assert.ok(typeof v === 'number' && Number.isFinite(v) && v > 0, `${what}.${k} = ${String(v)}`);
  }
}

describe('troupe bench model --model', function () {
  this.timeout(120_000);
  let dir: string;
  let single: string;
  let sharded: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'troupe-bench-model-'));
    single = join(dir, 'single');
    sharded = join(dir, 'sharded');
    const m = CausalLM.random(CFG, 3);
    try {
      await saveCheckpoint(single, m);
      await saveCheckpoint(sharded, m, { maxShardBytes: 20_000 });
    } finally {
      m.dispose();
    }
    assert.ok((await readdir(sharded)).includes('model.safetensors.index.json'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('measures load time, peak RSS and b1/b8 sampling tokens/s in a fresh process (--no-torch)', async () => {
    const r = await troupe('model', '--model', single, '--json', '--no-torch', '--gen-tokens', '8');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    assertPositive(
      out,
      ['load_s', 'peak_rss_mb', 'peak_rss_mb_after_gen', 'gen_tokens_per_s_b1', 'gen_tokens_per_s_b8'],
      'tfjs',
    );
    assert.equal(typeof out.backend, 'string');
    assert.equal(out.params, 256 * 64 + 2 * (64 * 64 + 2 * 32 * 64 + 64 * 64 + 3 * 64 * 128 + 2 * 64 + 2 * 16) + 64);
    assert.equal(out.gen_tokens, 8);
    assert.equal(out.prompt_len, 16);
    assert.ok(
      (out.peak_rss_mb_after_gen as number) >= (out.peak_rss_mb as number),
      'the peak after loading is part of the later one',
    );
    assert.equal(out.torch, null);
    assert.equal(out.torch_skipped, '--no-torch');
  });

  it('takes other batch sizes, prompt lengths and token counts', async () => {
    const r = await troupe(
      'model',
      '--model',
      sharded,
      '--json',
      '--no-torch',
      '--gen-batch',
      '2,3',
      '--gen-tokens',
      '4',
      '--prompt-len',
      '5',
    );
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    assertPositive(out, ['gen_tokens_per_s_b2', 'gen_tokens_per_s_b3'], 'tfjs');
    assert.equal(out.gen_tokens_per_s_b1, undefined);
    assert.deepEqual([out.gen_tokens, out.prompt_len], [4, 5]);
  });

  it('measures ONNX Runtime with --runtime onnx: the export counts in the first load, the cache serves the next', async () => {
    const before = process.env.TROUPE_ONNX_CACHE;
    process.env.TROUPE_ONNX_CACHE = join(dir, 'onnx-cache');
    try {
      const run = async (): Promise<Record<string, unknown>> => {
        const r = await troupe(
          'model',
          '--model',
          single,
          '--runtime',
          'onnx',
          '--json',
          '--no-torch',
          '--gen-tokens',
          '4',
        );
        assert.equal(r.code, 0, r.stderr);
        return JSON.parse(r.stdout) as Record<string, unknown>;
      };
      const first = await run();
      assert.equal(first.runtime, 'onnx');
      assert.match(String(first.impl), /^onnxruntime-node \d+\.\d+\.\d+ \(cpu\)$/);
      assertPositive(
        first,
        ['load_s', 'export_s', 'peak_rss_mb', 'gen_tokens_per_s_b1', 'gen_tokens_per_s_b8'],
        'onnx',
      );
      assert.equal(first.export_cached, false);
      assert.equal(
        first.params,
        256 * 64 + 2 * (64 * 64 + 2 * 32 * 64 + 64 * 64 + 3 * 64 * 128 + 2 * 64 + 2 * 16) + 64,
      );
      assert.equal(first.onnx_over_torch, null);
      const second = await run();
      assert.equal(second.export_cached, true);
      assert.equal(second.export_s, 0);
      const bad = await troupe('model', '--runtime', 'onnx', '--no-torch');
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--runtime onnx needs --model DIR/);
    } finally {
      if (before === undefined) delete process.env.TROUPE_ONNX_CACHE;
      else process.env.TROUPE_ONNX_CACHE = before;
    }
  });

  it('names the folder when it is not a checkpoint, and refuses a batch list without --model', async () => {
    const missing = join(dir, 'nothing-here');
    // the child's CheckpointError reaches the CLI as one (printed as one line, exit 1, by main)
    await assert.rejects(troupe('model', '--model', missing, '--json', '--no-torch'), {
      name: 'CheckpointError',
      message: `checkpoint folder ${missing} does not exist`,
    });
    const bad = await troupe('model', '--gen-batch', '1,8', '--no-torch');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--gen-batch takes one number without --model/);
  });

  it('measures PyTorch on the same (sharded) checkpoint at 1 and 2 threads, against the faster', async function () {
    const found = await findTorchPython();
    if (!found.python) {
      console.log(`      bench model vs PyTorch NOT RUN: ${found.reason}`);
      this.skip();
    }
    const r = await troupe('model', '--model', sharded, '--json', '--gen-tokens', '8');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, Record<string, unknown>>;
    assert.equal(out.torch_skipped, undefined);
    const torch = out.torch!;
    assertPositive(torch, ['load_s', 'peak_rss_mb', 'gen_tokens_per_s_b1', 'gen_tokens_per_s_b8'], 'torch');
    assert.equal(torch.params, out.params);
    const by = torch.by_threads as Record<string, Record<string, number>>;
    assert.deepEqual(Object.keys(by), ['1', '2']);
    assert.equal(by['1']!.peak_rss_mb, torch.peak_rss_mb);
    assert.equal(
      by['2']!.peak_rss_mb,
      undefined,
      "the second load shares the first one's process: its peak is not its own",
    );
    for (const k of ['gen_tokens_per_s_b1', 'gen_tokens_per_s_b8']) {
      assertPositive(by['1']!, [k], 'torch 1 thread');
      assertPositive(by['2']!, [k], 'torch 2 threads');
      assert.equal(torch[k], Math.max(by['1']![k]!, by['2']![k]!), `${k}: the faster thread count`);
      assert.equal((torch.threads as Record<string, number>)[k], by['1']![k]! >= by['2']![k]! ? 1 : 2);
      assert.equal(
        out.tfjs_over_torch![k],
        Math.round(((out[k] as unknown as number) / (torch[k] as number)) * 1000) / 1000,
      );
    }
  });
});

describe('troupe bench model (a preset)', function () {
  this.timeout(120_000);
  const small = ['--batch', '2', '--seq', '16', '--steps', '1', '--gen-batch', '2', '--gen-tokens', '4'];
  const keys = ['train_tokens_per_s', 'forward_tokens_per_s', 'gen_tokens_per_s'];

  it('measures PyTorch at 1 and 2 threads and compares against the faster of each figure, saying which', async function () {
    const found = await findTorchPython();
    if (!found.python) {
      console.log(`      bench model (preset) vs PyTorch NOT RUN: ${found.reason}`);
      this.skip();
    }
    const r = await troupe('model', '--json', ...small);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, Record<string, unknown>>;
    assert.equal(out.torch_skipped, undefined);
    const torch = out.torch!;
    assertPositive(out.tfjs!, keys, 'tfjs');
    assert.equal(torch.params, out.tfjs!.params, 'the same preset on both sides');
    assert.deepEqual([torch.batch, torch.seq, torch.gen_batch], [2, 16, 2]);
    const by = torch.by_threads as Record<string, Record<string, number>>;
    assert.deepEqual(Object.keys(by), ['1', '2']);
    for (const k of keys) {
      assertPositive(by['1']!, [k], 'torch 1 thread');
      assertPositive(by['2']!, [k], 'torch 2 threads');
      assert.equal(torch[k], Math.max(by['1']![k]!, by['2']![k]!), `${k}: the faster thread count`);
      assert.equal((torch.threads as Record<string, number>)[k], by['1']![k]! >= by['2']![k]! ? 1 : 2);
      assert.equal(
        out.tfjs_over_torch![k],
        Math.round(((out.tfjs![k] as number) / (torch[k] as number)) * 1000) / 1000,
      );
    }

    // the table: one row per thread count (one here, to keep the test short), the ratios, and which count they use
    const text = await troupe('model', ...small, '--torch-threads', '1');
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.trim().split('\n');
    assert.match(lines[0]!, /^model preset tiny \(\d+ params\), batch 2 × seq 16, generation 2 rows × 4 tokens$/);
    assert.match(lines[3]!, /^torch \S+ \(1 thread\)\s+[\d.]+\s+[\d.]+\s+[\d.]+$/);
    assert.match(lines[4]!, /^tfjs \/ fastest torch\s+[\d.]+\s+[\d.]+\s+[\d.]+$/);
    assert.equal(lines[5], 'fastest torch: train 1 thread, forward 1 thread, gen 1 thread');
    assert.equal(lines.length, 6);
  });

  it('says why torch was not measured with --no-torch', async () => {
    const r = await troupe('model', '--json', '--no-torch', ...small);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.equal(out.torch, null);
    assert.equal(out.tfjs_over_torch, null);
    assert.equal(out.torch_skipped, '--no-torch');
  });
});
