import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Completion, GenerationRequest } from '@troupe/kernel';
import { moduleConformance } from '@troupe/testing';
import { createOpenAiPolicy, withDefaults, type OpenAiPolicyConfig } from '../src/index.js';
import { ReplayServer } from './server.js';

interface Fixture {
  server: string;
  config: Partial<OpenAiPolicyConfig> & { model: string };
  request: { n: number; seed: number; stop?: string[]; topK?: number; maxTokens?: number };
  models: unknown;
  responses: unknown[];
  expected: Completion[];
}

const fixture = (name: string): Fixture =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')) as Fixture;

function request(over: Partial<Fixture['request']> = {}): GenerationRequest {
  const r = { n: 1, seed: 1, ...over };
  return {
    messages: [
      { role: 'system', content: 'You plan paths.' },
      { role: 'user', content: 'Reach the goal.' },
    ],
    sampling: {
      temperature: 0.7,
      topP: 0.95,
      topK: r.topK ?? 0,
      maxTokens: r.maxTokens ?? 32,
      ...(r.stop ? { stop: r.stop } : {}),
    },
    n: r.n,
    seed: r.seed,
  };
}

async function rejects(p: Promise<unknown>, pattern: RegExp): Promise<Error> {
  let caught: unknown;
  await p.then(
    () => undefined,
    (e: unknown) => {
      caught = e;
    },
  );
  assert.ok(caught instanceof Error, 'expected a rejection');
  assert.match(caught.message, pattern);
  return caught;
}

const MODELS = { object: 'list', data: [{ id: 'm', object: 'model', created: 0, owned_by: 'test' }] };
const ok = (text: string) => ({
  body: {
    id: 'x',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
  },
});

moduleConformance(fileURLToPath(new URL('..', import.meta.url)));

describe('kind: openai policy', () => {
  let server: ReplayServer;
  afterEach(async () => server?.close());

  for (const name of ['vllm', 'sglang', 'ollama', 'llamacpp']) {
    it(`reads ${name}'s recorded responses: text, token ids, log-probs, finish reasons`, async () => {
      const f = fixture(name);
      server = await ReplayServer.start(f.models);
      server.replies.push(...f.responses.map((body) => ({ body })));
      const policy = await createOpenAiPolicy('p', withDefaults({ baseUrl: server.baseUrl, ...f.config }));
      const [out] = await policy.generate([request(f.request)]);
      const sorted = (cs: readonly Completion[]) => [...cs].sort((a, b) => a.text.localeCompare(b.text));
      // K parallel requests may be answered in any order; one n-request keeps the server's choice order.
      assert.deepEqual(f.config.supportsN ? out : sorted(out!), f.config.supportsN ? f.expected : sorted(f.expected));
      const bodies = server.chatBodies;
      assert.equal(bodies.length, f.config.supportsN ? 1 : f.request.n);
      for (const b of bodies) {
        assert.equal(b.model, f.config.model);
        assert.equal(b.temperature, 0.7);
        assert.equal(b.top_p, 0.95);
        assert.equal(b.max_tokens, f.request.maxTokens ?? 32);
        assert.equal(b.logprobs, true);
        assert.deepEqual(b.stop, f.request.stop);
        assert.equal(b.top_k, f.request.topK ? f.request.topK : undefined);
        assert.equal(b.n, f.config.supportsN ? f.request.n : undefined);
        assert.equal(b.return_token_ids, f.config.returnTokenIds ? true : undefined);
        assert.deepEqual(b.chat_template_kwargs, f.config.chatTemplateKwargs);
        for (const [k, v] of Object.entries(f.config.extraBody ?? {})) assert.deepEqual(b[k], v);
        assert.deepEqual(b.messages, request().messages);
      }
      // The first sample keeps the request's seed; the others get distinct seeds.
      const seeds = bodies.map((b) => b.seed as number);
      assert.equal(new Set(seeds).size, seeds.length);
      assert.ok(seeds.includes(f.request.seed));
      const usage = f.responses as { usage: { prompt_tokens: number; completion_tokens: number } }[];
      assert.deepEqual(policy.usage, {
        requests: f.responses.length,
        promptTokens: usage.reduce((s, r) => s + r.usage.prompt_tokens, 0),
        completionTokens: usage.reduce((s, r) => s + r.usage.completion_tokens, 0),
      });
    });
  }

  it("sends a seat's output grammar in the server's dialect, and none unless asked", async () => {
    server = await ReplayServer.start(MODELS);
    server.fallback = ok('#### [U]');
    const regex: GenerationRequest = { ...request(), grammar: { kind: 'regex', pattern: '#### \\[[UDLR]\\]' } };
    const choices: GenerationRequest = { ...request(), grammar: { kind: 'choices', choices: ['a.b', 'c|d'] } };
    for (const constrainedDecoding of ['vllm', 'sglang', 'none'] as const) {
      const policy = await createOpenAiPolicy(
        'p',
        withDefaults({ baseUrl: server.baseUrl, model: 'm', constrainedDecoding }),
      );
      await policy.generate([regex]);
      await policy.generate([choices]);
    }
    const sent = server.chatBodies.map((b) => ({ structured_outputs: b.structured_outputs, regex: b.regex }));
    assert.deepEqual(sent, [
      { structured_outputs: { regex: '#### \\[[UDLR]\\]' }, regex: undefined },
      { structured_outputs: { choice: ['a.b', 'c|d'] }, regex: undefined },
      { structured_outputs: undefined, regex: '#### \\[[UDLR]\\]' },
      { structured_outputs: undefined, regex: '(?:a\\.b|c\\|d)' },
      { structured_outputs: undefined, regex: undefined },
      { structured_outputs: undefined, regex: undefined },
    ]);
  });

  it('retries 429 and 503 and a dropped connection, then succeeds', async () => {
    server = await ReplayServer.start(MODELS);
    const fast = { 'retry-after-ms': '5' };
    // The dropped connection first: its retry waits the client's first backoff (about 0.5 s), the others 5 ms.
    server.replies.push(
      { reset: true },
      { status: 429, headers: fast, body: { error: { message: 'rate limited', type: 'rate_limit_error' } } },
      { status: 503, headers: fast, body: { error: { message: 'overloaded', type: 'server_error' } } },
      ok('#### [R]'),
    );
    const policy = await createOpenAiPolicy('p', withDefaults({ baseUrl: server.baseUrl, model: 'm', retries: 3 }));
    const [out] = await policy.generate([request()]);
    assert.equal(out![0]!.text, '#### [R]');
    assert.equal(server.chatBodies.length, 4);
  });

  it('gives one clear error when the retries run out', async () => {
    server = await ReplayServer.start(MODELS);
    for (let i = 0; i < 2; i++)
      server.replies.push({
        status: 503,
        headers: { 'retry-after-ms': '5' },
        body: { error: { message: 'overloaded' } },
      });
    const policy = await createOpenAiPolicy(
      'planner',
      withDefaults({ baseUrl: server.baseUrl, model: 'm', retries: 1 }),
    );
    const err = await rejects(
      policy.generate([request()]),
      /policy 'planner' \(openai\): POST \/chat\/completions failed: the server at .* answered 503: .*overloaded.* \(after 1 retry\)/,
    );
    assert.equal(err.name, 'PluginError');
    assert.equal(server.chatBodies.length, 2);
  });

  it('gives up on a request the server does not answer within timeoutMs, with an error naming the timeout', async () => {
    server = await ReplayServer.start(MODELS);
    server.replies.push({ hold: true });
    const policy = await createOpenAiPolicy(
      'p',
      withDefaults({ baseUrl: server.baseUrl, model: 'm', timeoutMs: 200, retries: 0 }),
    );
    await rejects(
      policy.generate([request()]),
      /policy 'p' \(openai\): POST \/chat\/completions to http:\/\/127\.0\.0\.1:\d+\/v1 timed out after 200 ms[\s\S]*hint: raise timeoutMs/,
    );
  });

  it('does not retry a 400', async () => {
    server = await ReplayServer.start(MODELS);
    server.replies.push({ status: 400, body: { error: { message: "'n' must be 1", type: 'invalid_request_error' } } });
    const policy = await createOpenAiPolicy(
      'p',
      withDefaults({ baseUrl: server.baseUrl, model: 'm', retries: 3, supportsN: true }),
    );
    await rejects(policy.generate([request({ n: 2 })]), /answered 400: .*'n' must be 1/);
    assert.equal(server.chatBodies.length, 1);
  });

  it('refuses a server that answers fewer choices than n, and says to set supportsN: false', async () => {
    server = await ReplayServer.start(MODELS);
    server.replies.push(ok('#### [U]'));
    const policy = await createOpenAiPolicy(
      'p',
      withDefaults({ baseUrl: server.baseUrl, model: 'm', supportsN: true }),
    );
    await rejects(
      policy.generate([request({ n: 3 })]),
      /asked the server .* for n=3 choices and got 1[\s\S]*supportsN: false/,
    );
  });

  it('fails at start, clearly, when the server is unreachable', async () => {
    server = await ReplayServer.start(MODELS);
    const baseUrl = server.baseUrl;
    await server.close();
    await rejects(
      createOpenAiPolicy('p', withDefaults({ baseUrl, model: 'm', retries: 0 })),
      /plugin @troupe\/policy-openai: policy 'p' \(openai\): cannot reach the server at http:\/\/127\.0\.0\.1:\d+\/v1: connect ECONNREFUSED[\s\S]*hint: check that the server is running/,
    );
  });

  it('fails at start, clearly, when the server does not serve the model', async () => {
    server = await ReplayServer.start(fixture('ollama').models);
    await rejects(
      createOpenAiPolicy('p', withDefaults({ baseUrl: server.baseUrl, model: 'qwen3:8b' })),
      /does not serve model "qwen3:8b" \(it serves: qwen3:0\.6b, llama3\.2:1b\)[\s\S]*hint: set policies\.p\.model/,
    );
  });

  it('sends the key named by apiKeyEnv as a bearer token, and no key (not even OPENAI_API_KEY) without one', async () => {
    server = await ReplayServer.start(MODELS);
    const saved = { a: process.env.TROUPE_TEST_KEY, b: process.env.OPENAI_API_KEY };
    process.env.TROUPE_TEST_KEY = 'sk-test-0123456789';
    process.env.OPENAI_API_KEY = 'sk-should-not-be-sent';
    try {
      await createOpenAiPolicy(
        'p',
        withDefaults({ baseUrl: server.baseUrl, model: 'm', apiKeyEnv: 'TROUPE_TEST_KEY' }),
      );
      await createOpenAiPolicy('q', withDefaults({ baseUrl: server.baseUrl, model: 'm' }));
      assert.deepEqual(
        server.requests.map((r) => r.headers.authorization),
        ['Bearer sk-test-0123456789', undefined],
      );
      delete process.env.TROUPE_TEST_KEY;
      await rejects(
        createOpenAiPolicy('p', withDefaults({ baseUrl: server.baseUrl, model: 'm', apiKeyEnv: 'TROUPE_TEST_KEY' })),
        /apiKeyEnv names the environment variable TROUPE_TEST_KEY, which is not set[\s\S]*export TROUPE_TEST_KEY=/,
      );
    } finally {
      for (const [k, v] of [
        ['TROUPE_TEST_KEY', saved.a],
        ['OPENAI_API_KEY', saved.b],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('keeps the key out of the policy object, its JSON and its errors', async () => {
    server = await ReplayServer.start(MODELS);
    process.env.TROUPE_TEST_KEY = 'sk-secret-5f3a9c';
    try {
      const policy = await createOpenAiPolicy(
        'p',
        withDefaults({ baseUrl: server.baseUrl, model: 'm', apiKeyEnv: 'TROUPE_TEST_KEY', retries: 0 }),
      );
      server.replies.push({
        status: 401,
        body: { error: { message: 'invalid api key', type: 'invalid_request_error' } },
      });
      const err = await rejects(
        policy.generate([request()]),
        /answered 401[\s\S]*check the key in the environment variable TROUPE_TEST_KEY/,
      );
      const { inspect } = await import('node:util');
      for (const text of [JSON.stringify(policy), inspect(policy, { depth: 5 }), err.message, String(err.stack)])
        assert.ok(!text.includes('sk-secret-5f3a9c'), text);
    } finally {
      delete process.env.TROUPE_TEST_KEY;
    }
  });

  it('refuses extraBody fields the policy sets itself', async () => {
    server = await ReplayServer.start(MODELS);
    await rejects(
      createOpenAiPolicy('p', withDefaults({ baseUrl: server.baseUrl, model: 'm', extraBody: { seed: 1 } })),
      /extraBody\.seed is a field the policy sets itself/,
    );
  });

  it('keeps at most maxConcurrency requests in flight', async () => {
    server = await ReplayServer.start(MODELS);
    for (let i = 0; i < 6; i++) server.replies.push({ ...ok(`#### [${'U'.repeat(1)}]`), together: 2 });
    const policy = await createOpenAiPolicy(
      'p',
      withDefaults({ baseUrl: server.baseUrl, model: 'm', maxConcurrency: 2 }),
    );
    const out = await policy.generate([request({ n: 4 }), request({ n: 2, seed: 2 })]);
    assert.deepEqual(
      out.map((cs) => cs.length),
      [4, 2],
    );
    assert.equal(server.maxInFlight, 2);
  });

  it('cancels the rest of a call when one of its requests fails for good', async () => {
    server = await ReplayServer.start(MODELS);
    server.replies.push({ status: 400, body: { error: { message: 'bad request' } } }, ok('a'), ok('b'));
    const policy = await createOpenAiPolicy(
      'p',
      withDefaults({ baseUrl: server.baseUrl, model: 'm', maxConcurrency: 1 }),
    );
    await rejects(policy.generate([request({ n: 3 })]), /answered 400/);
    await new Promise((r) => setImmediate(r));
    assert.equal(server.chatBodies.length, 1);
  });

  it('shares one caller signal among many requests without a listener-leak warning', async () => {
    server = await ReplayServer.start(MODELS);
    server.fallback = ok('#### [D]');
    const policy = await createOpenAiPolicy(
      'p',
      withDefaults({ baseUrl: server.baseUrl, model: 'm', maxConcurrency: 32 }),
    );
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const signal = new AbortController().signal;
      const out = await Promise.all(
        Array.from({ length: 3 }, (_, i) => policy.generate([request({ n: 8, seed: i })], { signal })),
      );
      assert.deepEqual(
        out.map((o) => o[0]!.length),
        [8, 8, 8],
      );
      await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(
        warnings.filter((w) => w === 'MaxListenersExceededWarning'),
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('rejects with an AbortError when the signal fires, and sends nothing after an abort', async () => {
    server = await ReplayServer.start(MODELS);
    server.replies.push({ hold: true });
    const policy = await createOpenAiPolicy('p', withDefaults({ baseUrl: server.baseUrl, model: 'm' }));
    const controller = new AbortController();
    const pending = policy.generate([request()], { signal: controller.signal });
    while (server.chatBodies.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const err = await rejects(pending, /abort/i);
    assert.equal(err.name, 'AbortError');
    await rejects(policy.generate([request()], { signal: controller.signal }), /abort/i);
    assert.equal(server.chatBodies.length, 1);
  });
});
