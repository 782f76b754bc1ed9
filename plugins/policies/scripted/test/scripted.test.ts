import assert from 'node:assert/strict';
import { lastValueFrom, toArray } from 'rxjs';
import {
  Container,
  PolicyContribution,
  type GenerationRequest,
  type Policy,
  type RenderContext,
  type SamplingParams,
  type SeatContext,
  createRng,
  isEvent,
  isScriptedPolicy,
  oracleRenderContext,
  runEpisode,
  type EpisodeContext,
} from '@troupe/kernel';
import {
  createOraclePolicy,
  createRandomPolicy,
  OraclePolicyContribution,
  RandomPolicyContribution,
  scriptedPoliciesModule,
} from '../src/index.js';
import { counterEnv, counterReward, counterRole, type CounterEnv } from './counter.js';

const SAMPLING: SamplingParams = { temperature: 1, topP: 1, topK: 0, maxTokens: 4 };

function episode(env: CounterEnv, policy: Policy, over: Partial<EpisodeContext> = {}): EpisodeContext {
  return {
    environment: env,
    instance: { start: 1, target: 6 },
    instanceUid: 'u',
    split: 'test',
    seed: 5,
    reward: counterReward(),
    branches: 2,
    seats: env.seats.map((s) => ({ name: s.name, role: counterRole(), policy, sampling: SAMPLING })),
    ...over,
  } as EpisodeContext;
}

function request(env: CounterEnv, n: number, seed: number, value = 0): GenerationRequest {
  return {
    messages: [{ role: 'user', content: 'go' }],
    sampling: SAMPLING,
    n,
    seed,
    scripted: {
      environment: env,
      state: { value, target: 5, moves: [] },
      role: counterRole(),
      seat: { seat: 'a', actionType: 'delta' },
    },
  };
}

describe('scripted policies', () => {
  it("oracle hands the role the environment's oracle program (oracleRenderContext), for roles that write programs", async () => {
    const asked: { state: unknown; seat: string; language: string }[] = [];
    const env: CounterEnv = {
      ...counterEnv(),
      oracleProgram: (state, seat, language) => (
        asked.push({ state, seat, language }),
        language === 'python' ? `print(${state.target - state.value})` : undefined
      ),
    };
    const writer = {
      ...counterRole(),
      render: (a: number, _seat: SeatContext, context?: RenderContext) => context?.oracleProgram?.('python') ?? `+${a}`,
    };
    const req = request(env, 2, 1, 2);
    const [out] = await createOraclePolicy('o').generate([{ ...req, scripted: { ...req.scripted!, role: writer } }]);
    assert.deepEqual(
      out!.map((c) => c.text),
      ['print(3)', 'print(3)'],
    );
    assert.deepEqual(asked[0], { state: { value: 2, target: 5, moves: [] }, seat: 'a', language: 'python' });
    assert.deepEqual(
      oracleRenderContext(counterEnv(), { value: 0, target: 1, moves: [] }, 'a'),
      {},
      'no oracleProgram: an empty context',
    );
  });

  it('oracle renders the environment oracle with the role, n times, with empty tokens', async () => {
    const env = counterEnv();
    const oracle = createOraclePolicy('o');
    assert.ok(isScriptedPolicy(oracle));
    assert.equal(oracle.kind, 'oracle');
    assert.equal(oracle.version, 0);
    const [out] = await oracle.generate([request(env, 3, 1, 4)]);
    assert.deepEqual(
      out!.map((c) => c.text),
      ['+1', '+1', '+1'],
    );
    assert.ok(
      out!.every(
        (c) =>
          c.tokenIds.length === 0 && c.logprobs.length === 0 && c.promptIds.length === 0 && c.finishReason === 'stop',
      ),
    );
  });

  it('oracle solves the counter episode through runEpisode', async () => {
    const events = await lastValueFrom(runEpisode(episode(counterEnv(), createOraclePolicy('o'))).pipe(toArray()));
    const end = events.at(-1)!;
    assert.ok(end.type === 'end' && end.success);
    assert.ok(events.filter(isEvent('step')).every((s) => s.parseError === undefined && s.policy === 'o'));
  });

  it('oracle fails with a clear error when the environment has no oracle', async () => {
    const env = counterEnv();
    const { oracle: _drop, ...noOracle } = env;
    const err = /Policy 'o' \(oracle\): environment 'counter-v0' has no oracle.*Use kind: random/;
    await assert.rejects(createOraclePolicy('o').generate([request(noOracle as CounterEnv, 1, 1)]), err);
    await assert.rejects(lastValueFrom(runEpisode(episode(noOracle as CounterEnv, createOraclePolicy('o')))), err);
  });

  it('random is seeded by the request seed: same seed → same samples, other seeds → others', async () => {
    const env = counterEnv();
    const random = createRandomPolicy('r', 42);
    const texts = async (seed: number) => (await random.generate([request(env, 8, seed)]))[0]!.map((c) => c.text);
    const a = await texts(1);
    assert.deepEqual(await texts(1), a);
    assert.notDeepEqual(await texts(2), a);
    assert.ok(a.every((t) => ['-1', '+0', '+1', '+2'].includes(t)));
    assert.ok(new Set(a).size > 1, 'the K samples of one request differ');
    // two random policies with the same creation seed agree
    assert.deepEqual(
      (await createRandomPolicy('r2', 42).generate([request(env, 8, 1)]))[0]!.map((c) => c.text),
      a,
    );
  });

  it('random plays whole episodes reproducibly', async () => {
    const run = async () =>
      lastValueFrom(runEpisode(episode(counterEnv(), createRandomPolicy('r', 0), { branches: 3 })).pipe(toArray()));
    assert.deepEqual(await run(), await run());
  });

  it('answers several requests in order, refuses requests without the scripted context, and honours abort', async () => {
    const env = counterEnv();
    const oracle = createOraclePolicy('o');
    const out = await oracle.generate([request(env, 1, 1, 4), request(env, 2, 1, 0)]);
    assert.deepEqual(
      out.map((c) => c.map((x) => x.text)),
      [['+1'], ['+2', '+2']],
    );
    await assert.rejects(
      oracle.generate([{ messages: [], sampling: SAMPLING, n: 1, seed: 0 }]),
      /needs the true state.*no 'scripted' context/,
    );
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(oracle.generate([request(env, 1, 1)], { signal: controller.signal }), { name: 'AbortError' });
  });

  it('scriptedPoliciesModule binds oracle and random to PolicyContribution', async () => {
    const container = new Container();
    container.load(scriptedPoliciesModule);
    const contributions = container.getAll<PolicyContribution>(PolicyContribution);
    assert.deepEqual(contributions.map((c) => c.id).sort(), ['oracle', 'random']);
    const ctx = { baseDir: '.', seed: 3, rng: createRng(3) };
    const oracle = await new OraclePolicyContribution().create('shared');
    const random = await new RandomPolicyContribution().create('other', {}, ctx);
    assert.deepEqual([oracle.name, oracle.kind, random.name, random.kind], ['shared', 'oracle', 'other', 'random']);
    assert.deepEqual(new OraclePolicyContribution().configSchema, {
      type: 'object',
      properties: {},
      additionalProperties: false,
    });
  });
});
