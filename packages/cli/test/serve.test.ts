import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import OpenAI from 'openai';
import type { FastifyInstance } from 'fastify';
import {
  CausalLM,
  generateBatch,
  generateIds,
  initBackend,
  loadCheckpoint,
  loadLoraAdapter,
  loadTokenizer,
  saveLoraAdapter,
  writeCheckpoint,
  type GenerationItem,
  type Tokenizer,
} from '@troupe/lm';
import { troupe } from './helpers/cli.js';
import { createServer } from '../src/serve/server.js';

const CFG = {
  model_type: 'qwen3',
  vocab_size: 300,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
  eos_token_id: 2,
  bos_token_id: 1,
};

/** Starts `troupe serve` as a process and resolves with its URL once its first stdout line names it. */
function startServe(args: string[]): Promise<{ url: string; child: ChildProcess; firstLine: string }> {
  return new Promise((resolve, reject) => {
    let child!: ChildProcess;
    let out = '';
    const done = troupe(['serve', ...args], {
      onSpawn: (c) => {
        child = c;
        c.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const nl = out.indexOf('\n');
          if (nl >= 0) {
            const firstLine = out.slice(0, nl);
            const m = /listening on (http:\/\/\S+\/v1)/.exec(firstLine);
            if (m) resolve({ url: m[1]!, child, firstLine });
            else reject(new Error(`unexpected first line: ${firstLine}`));
          }
        });
      },
    });
    void done.then((r) => reject(new Error(`troupe serve exited ${r.code}: ${r.stderr}`)));
  });
}

describe('troupe serve', function () {
  this.timeout(120_000);
  let dir: string;
  let ckpt: string;
  let tok: Tokenizer;
  let model: CausalLM;
  let served: { url: string; child: ChildProcess; firstLine: string };
  let client: OpenAI;

  before(async () => {
    await initBackend();
    dir = mkdtempSync(join(tmpdir(), 'troupe-serve-'));
    ckpt = join(dir, 'tiny-ckpt');
    const m = CausalLM.random(CFG, 7);
    try {
      await writeCheckpoint(ckpt, CFG, m.exportTensors());
    } finally {
      m.dispose();
    }
    model = await loadCheckpoint(ckpt);
    tok = await loadTokenizer('tiny');
    served = await startServe([
      '--model',
      ckpt,
      '--tokenizer',
      'tiny',
      '--port',
      '0',
      '--served-model-name',
      'tiny-test',
    ]);
    client = new OpenAI({ baseURL: served.url, apiKey: 'unused', maxRetries: 0 });
  });
  after(() => {
    served?.child.kill('SIGTERM');
    model?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the URL on its first stdout line and lists the served model', async () => {
    assert.match(served.firstLine, /^troupe serve: listening on http:\/\/127\.0\.0\.1:\d+\/v1 \(model tiny-test\)$/);
    const models = await client.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ['tiny-test'],
    );
    const health = await fetch(served.url.replace(/\/v1$/, '/health'));
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { status: string }).status, 'ok');
  });

  it('answers chat completions through the openai client: greedy tokens equal in-process generation', async () => {
    const messages = [{ role: 'user' as const, content: 'go right' }];
    const res = await client.chat.completions.create({
      model: 'tiny-test',
      messages,
      temperature: 0,
      max_tokens: 12,
      logprobs: true,
    });
    const ids = tok.encode(tok.applyChatTemplate(messages));
    const [want] = await generateIds(model, ids, { maxNewTokens: 12, temperature: 0, tokenizer: tok });
    assert.equal(res.choices.length, 1);
    assert.equal(res.choices[0]!.message.content, want!.text);
    assert.equal(res.choices[0]!.finish_reason, want!.finishReason);
    assert.deepEqual(
      res.choices[0]!.logprobs!.content!.map((c) => c.logprob),
      want!.logprobs,
    );
    assert.deepEqual(res.usage, {
      prompt_tokens: ids.length,
      completion_tokens: want!.tokenIds.length,
      total_tokens: ids.length + want!.tokenIds.length,
    });
  });

  it('samples n seeded choices: the same seed gives the same choices, stop strings cut the text', async () => {
    const req = { model: 'tiny-test', prompt: 'abc', n: 3, seed: 11, temperature: 1, max_tokens: 10 };
    const a = await client.completions.create(req);
    const b = await client.completions.create(req);
    assert.equal(a.choices.length, 3);
    assert.deepEqual(
      a.choices.map((c) => c.text),
      b.choices.map((c) => c.text),
    );
    const [want] = await generateBatch(
      model,
      [{ promptIds: tok.encode('abc'), options: { maxNewTokens: 10, n: 3, seed: 11, temperature: 1 } }],
      { tokenizer: tok },
    );
    assert.deepEqual(
      a.choices.map((c) => c.text),
      want!.map((s) => s.text),
    );
    const full = a.choices[0]!.text;
    assert.ok(full.length >= 2, `sampled text "${full}" too short to cut`);
    const stop = full.slice(1, 2);
    const cut = await client.completions.create({ ...req, n: 1, stop: [stop] });
    assert.equal(cut.choices[0]!.text, full.slice(0, full.indexOf(stop) + stop.length));
    assert.equal(cut.choices[0]!.finish_reason, 'stop');
  });

  it('streams chat and completion chunks (SSE) that add up to the plain answer, with usage', async () => {
    const messages = [{ role: 'user' as const, content: 'hello there' }];
    const plain = await client.chat.completions.create({
      model: 'tiny-test',
      messages,
      temperature: 0,
      max_tokens: 10,
    });
    const stream = await client.chat.completions.create({
      model: 'tiny-test',
      messages,
      temperature: 0,
      max_tokens: 10,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: unknown;
    let chunks = 0;
    for await (const c of stream) {
      chunks++;
      if (c.usage) usage = c.usage;
      for (const ch of c.choices) {
        text += ch.delta.content ?? '';
        finish = ch.finish_reason ?? finish;
      }
    }
    assert.ok(chunks >= 3, `${chunks} chunks`);
    assert.equal(text, plain.choices[0]!.message.content);
    assert.equal(finish, plain.choices[0]!.finish_reason);
    assert.deepEqual(usage, plain.usage);

    const cplain = await client.completions.create({
      model: 'tiny-test',
      prompt: 'xyz',
      temperature: 0,
      max_tokens: 8,
    });
    let ctext = '';
    for await (const c of await client.completions.create({
      model: 'tiny-test',
      prompt: 'xyz',
      temperature: 0,
      max_tokens: 8,
      stream: true,
    })) {
      ctext += c.choices[0]?.text ?? '';
    }
    assert.equal(ctext, cplain.choices[0]!.text);

    // A stop string cuts the streamed text where it cuts the plain one.
    const stop = cplain.choices[0]!.text.slice(1, 2);
    assert.ok(stop, `greedy text "${cplain.choices[0]!.text}" too short to cut`);
    const cut = await client.completions.create({
      model: 'tiny-test',
      prompt: 'xyz',
      temperature: 0,
      max_tokens: 8,
      stop,
    });
    let stext = '';
    for await (const c of await client.completions.create({
      model: 'tiny-test',
      prompt: 'xyz',
      temperature: 0,
      max_tokens: 8,
      stop,
      stream: true,
    })) {
      stext += c.choices[0]?.text ?? '';
    }
    assert.equal(stext, cut.choices[0]!.text);
    assert.ok(stext.length < ctext.length || ctext.endsWith(stop), `"${stext}" was not cut`);
  });

  it("returns token ids on vLLM's return_token_ids", async () => {
    const res = await fetch(`${served.url}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'tiny-test',
        prompt: 'abc',
        temperature: 0,
        max_tokens: 5,
        return_token_ids: true,
      }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { prompt_token_ids: number[]; choices: { token_ids: number[] }[] };
    const [want] = await generateIds(model, tok.encode('abc'), { maxNewTokens: 5, temperature: 0, tokenizer: tok });
    assert.deepEqual(body.prompt_token_ids, tok.encode('abc'));
    assert.deepEqual(body.choices[0]!.token_ids, want!.tokenIds);
  });

  it('answers bad requests with 400 and an unknown model with 404, as OpenAI error JSON', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'tiny-test', messages: [], max_tokens: 4 }),
      (e: unknown) => {
        assert.ok(e instanceof OpenAI.BadRequestError);
        assert.equal(e.status, 400);
        assert.equal(e.type, 'invalid_request_error');
        assert.match(e.message, /messages/);
        return true;
      },
    );
    await assert.rejects(
      client.completions.create({ model: 'tiny-test', prompt: 'a', temperature: 5 }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && /temperature/.test(e.message),
    );
    await assert.rejects(
      client.completions.create({ model: 'tiny-test', prompt: 'a', max_tokens: 1_000_000 }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && e.code === 'context_length_exceeded',
    );
    await assert.rejects(
      client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
      (e: unknown) => {
        assert.ok(e instanceof OpenAI.NotFoundError);
        assert.equal(e.code, 'model_not_found');
        assert.match(e.message, /gpt-4o.*tiny-test/);
        return true;
      },
    );
    const raw = await fetch(`${served.url}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"tiny-test","prompt":"a","n":"two"}',
    });
    assert.equal(raw.status, 400);
    const body = (await raw.json()) as {
      error: { message: string; type: string; param: string | null; code: string | null };
    };
    assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
    assert.equal(body.error.param, 'n');
  });

  it('serves a checkpoint with a LoRA adapter (--adapter): greedy tokens equal the adapted model in-process', async () => {
    const adapted = await loadCheckpoint(ckpt);
    const adapter = join(dir, 'adapter');
    try {
      adapted.addLora({ r: 2, alpha: 4, targetModules: ['q_proj', 'v_proj', 'o_proj'] }, 3);
      for (const p of adapted.lora.values()) p.b.assign(tf.randomNormal(p.b.shape, 0, 2, 'float32', 1));
      await saveLoraAdapter(adapter, adapted, { baseModel: 'tiny-test' });
    } finally {
      adapted.dispose();
    }
    const withAdapter = await loadCheckpoint(ckpt);
    const s = await startServe(['--model', ckpt, '--adapter', adapter, '--tokenizer', 'tiny', '--port', '0']);
    try {
      await loadLoraAdapter(adapter, withAdapter);
      const c = new OpenAI({ baseURL: s.url, apiKey: 'unused', maxRetries: 0 });
      const res = await c.completions.create({
        model: 'tiny-ckpt',
        prompt: 'abc',
        temperature: 0,
        max_tokens: 8,
        logprobs: 0,
      });
      const [want] = await generateIds(withAdapter, tok.encode('abc'), {
        maxNewTokens: 8,
        temperature: 0,
        tokenizer: tok,
      });
      const [base] = await generateIds(model, tok.encode('abc'), { maxNewTokens: 8, temperature: 0, tokenizer: tok });
      assert.deepEqual(res.choices[0]!.logprobs!.token_logprobs, want!.logprobs);
      assert.notDeepEqual(want!.logprobs, base!.logprobs); // the adapter changes the model
    } finally {
      s.child.kill('SIGTERM');
      withAdapter.dispose();
    }
  });

  it('serves through ONNX Runtime (--runtime onnx): greedy tokens and log-probs match the tfjs model in-process', async () => {
    const before = process.env.TROUPE_ONNX_CACHE;
    process.env.TROUPE_ONNX_CACHE = join(dir, 'onnx-cache'); // the server process's export cache
    const s = await startServe(['--model', ckpt, '--runtime', 'onnx', '--tokenizer', 'tiny', '--port', '0']);
    try {
      const c = new OpenAI({ baseURL: s.url, apiKey: 'unused', maxRetries: 0 });
      const messages = [{ role: 'user' as const, content: 'go left then up' }];
      const [res, other] = await Promise.all([
        c.chat.completions.create({ model: 'tiny-ckpt', messages, temperature: 0, max_tokens: 10, logprobs: true }),
        c.completions.create({ model: 'tiny-ckpt', prompt: 'abc', temperature: 0, max_tokens: 6, logprobs: 0 }),
      ]);
      const [want] = await generateIds(model, tok.encode(tok.applyChatTemplate(messages)), {
        maxNewTokens: 10,
        temperature: 0,
        tokenizer: tok,
      });
      const [wantOther] = await generateIds(model, tok.encode('abc'), {
        maxNewTokens: 6,
        temperature: 0,
        tokenizer: tok,
      });
      assert.equal(res.choices[0]!.message.content, want!.text);
      res.choices[0]!.logprobs!.content!.forEach((t, i) =>
        assert.ok(Math.abs(t.logprob - want!.logprobs[i]!) < 1e-3, `logprob ${i}`),
      );
      assert.equal(other.choices[0]!.text, wantOther!.text);
    } finally {
      s.child.kill('SIGTERM');
      if (before === undefined) delete process.env.TROUPE_ONNX_CACHE;
      else process.env.TROUPE_ONNX_CACHE = before;
    }
    const refused = await troupe(['serve', '--model', ckpt, '--runtime', 'onnx', '--adapter', dir, '--port', '0']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--adapter is not supported with --runtime onnx/);
  });

  it('refuses a folder without a checkpoint, naming it', async () => {
    const res = await troupe(['serve', '--model', dir, '--port', '0']);
    assert.equal(res.code, 1);
    assert.match(
      res.stderr,
      new RegExp(`--model ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: no config\\.json there`),
    );
    assert.doesNotMatch(res.stderr, /\n\s+at /);
  });

  describe('batching and the bounded queue', () => {
    let app: FastifyInstance | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    it('decodes waiting requests together in one batch, and answers 503 once the queue is full', async () => {
      let open!: () => void;
      const gate = new Promise<void>((r) => {
        open = r;
      });
      const batches: number[] = [];
      app = createServer({
        model,
        tokenizer: tok,
        modelName: 'm',
        maxQueue: 2,
        maxBatch: 8,
        generateBatch: async (mdl: CausalLM, items: readonly GenerationItem[], shared: { tokenizer?: Tokenizer }) => {
          batches.push(items.length);
          await gate; // the first batch holds the worker until the queue has filled
          return generateBatch(mdl, items, shared);
        },
      });
      const url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/v1`;
      const c = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
      const ask = (prompt: string) => c.completions.create({ model: 'm', prompt, temperature: 0, max_tokens: 6 });
      const first = ask('first');
      while (batches.length === 0) await new Promise((r) => setTimeout(r, 5));
      const queued = [ask('second'), ask('third')];
      while (((await (await fetch(url.replace(/\/v1$/, '/health'))).json()) as { waiting: number }).waiting < 2)
        await new Promise((r) => setTimeout(r, 5));
      await assert.rejects(ask('fourth'), (e: unknown) => {
        assert.ok(e instanceof OpenAI.APIError);
        assert.equal(e.status, 503);
        assert.equal(e.code, 'queue_full');
        return true;
      });
      open();
      const answers = await Promise.all([first, ...queued]);
      assert.deepEqual(batches, [1, 2]);
      // Batched answers equal each prompt decoded alone (greedy).
      for (const [i, p] of ['first', 'second', 'third'].entries()) {
        const [alone] = await generateIds(model, tok.encode(p), { maxNewTokens: 6, temperature: 0, tokenizer: tok });
        assert.equal(answers[i]!.choices[0]!.text, alone!.text, p);
      }
    });
    it('streams each token as it is sampled, before the request has finished', async () => {
      let open!: () => void;
      const gate = new Promise<void>((r) => {
        open = r;
      });
      let released = false;
      app = createServer({
        model,
        tokenizer: tok,
        modelName: 'm',
        generateBatch: async (mdl: CausalLM, items: readonly GenerationItem[], shared: { tokenizer?: Tokenizer }) => {
          const out = await generateBatch(mdl, items, shared);
          await gate; // the answer is held back: only the per-token chunks can reach the client before this opens
          released = true;
          return out;
        },
      });
      const url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/v1`;
      const c = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
      const it = (
        await c.completions.create({
          model: 'm',
          prompt: 'stream me',
          temperature: 0,
          max_tokens: 6,
          logprobs: 0,
          stream: true,
        })
      )[Symbol.asyncIterator]();
      const firsts = [(await it.next()).value!, (await it.next()).value!];
      assert.equal(released, false);
      assert.equal(firsts[0]!.choices[0]!.finish_reason, null);
      open();
      const rest: typeof firsts = [];
      for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value);
      const all = [...firsts, ...rest];
      const [want] = await generateIds(model, tok.encode('stream me'), {
        maxNewTokens: 6,
        temperature: 0,
        tokenizer: tok,
      });
      assert.equal(all.map((ch) => ch.choices[0]!.text).join(''), want!.text);
      assert.deepEqual(
        all.flatMap((ch) => ch.choices[0]!.logprobs?.token_logprobs ?? []),
        want!.logprobs,
      );
      assert.equal(all.at(-1)!.choices[0]!.finish_reason, want!.finishReason);
    });
  });

  it('a team with `kind: openai` on the server plays the same greedy turns as the checkpoint in-process', async () => {
    const seat =
      '{ role: planner, roleConfig: { maxMoves: 8 }, policy: shared, sampling: { temperature: 0, topP: 1, topK: 0, maxTokens: 16 } }';
    const spec = (policy: string): string =>
      [
        'name: serve-parity',
        'seed: 3',
        'environment: { id: plan-path, config: { size: 5, wallProbability: 0, maxTurns: 2, maxMoves: 8, reward: shaped } }',
        `policies:\n  shared: ${policy}`,
        `seats:\n  proposer: ${seat}\n  executor: ${seat}`,
        'rewards:\n  id: signals\n  config: { team: executed_reward }\n  seats:\n    proposer: { alpha: 1, config: { local: proposal_reward } }\n    executor: { alpha: 1, config: { local: executed_reward } }',
        'algorithm: { name: none }',
        '',
      ].join('\n');
    const turns = async (name: string, policy: string): Promise<{ completion: string }[]> => {
      writeFileSync(join(dir, `${name}.yaml`), spec(policy));
      const trace = join(dir, `${name}.jsonl`);
      const res = await troupe(['run', join(dir, `${name}.yaml`), '-n', '2', '--trace', trace, '--no-progress']);
      assert.equal(res.code, 0, res.stderr);
      return readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((l) => {
          const t = JSON.parse(l) as {
            episodeId: string;
            turn: number;
            seat: string;
            completion: string;
            action: unknown;
            parseError: string | null;
          };
          return {
            episode: t.episodeId,
            turn: t.turn,
            seat: t.seat,
            completion: t.completion,
            action: t.action,
            parseError: t.parseError,
          };
        });
    };
    const local = await turns('local', `{ kind: tfjs-causal-lm, model: ${ckpt}, tokenizer: tiny }`);
    const remote = await turns('remote', `{ kind: openai, baseUrl: "${served.url}", model: tiny-test }`);
    assert.ok(local.length >= 2, `${local.length} turns`);
    assert.ok(
      local.some((t) => t.completion.length > 0),
      'the checkpoint wrote no text to compare',
    );
    assert.deepEqual(remote, local);
  });
});
