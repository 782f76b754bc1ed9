import assert from 'node:assert/strict';
import { lastValueFrom, toArray } from 'rxjs';
import type { Completion, GenerationRequest, Policy, SamplingParams } from '../src/contracts/index.js';
import { isEvent, isScriptedPolicy } from '../src/episode/index.js';
import { batchingPolicy, planEpisodes, runEpisodes } from '../src/rollout/index.js';
import { createOraclePolicy } from '../src/policy/scripted/index.js';
import { completion, counterEnv, counterReward, counterRole } from './helpers/counter.js';

const SAMPLING: SamplingParams = { temperature: 1, topP: 1, topK: 0, maxTokens: 4 };
const req = (seed: number, n = 1): GenerationRequest => ({ messages: [{ role: 'user', content: String(seed) }], sampling: SAMPLING, n, seed });

/** Echoes each request's seed as its completions; records batch sizes and the signal of each call. */
function echoPolicy(): Policy & { batches: number[]; signals: AbortSignal[]; hold?: Promise<void> } {
  const p: Policy & { batches: number[]; signals: AbortSignal[]; hold?: Promise<void> } = {
    name: 'echo', kind: 'fake', version: 7, batches: [], signals: [],
    async generate(reqs, opts) {
      p.batches.push(reqs.length);
      if (opts?.signal) p.signals.push(opts.signal);
      if (p.hold) await p.hold;
      opts?.signal?.throwIfAborted();
      return reqs.map((r): Completion[] => Array.from({ length: r.n }, (_, i) => completion(`${r.seed}.${i}`)));
    },
  };
  return p;
}

describe('rollout: batchingPolicy', () => {
  it('merges concurrent calls into one and gives each caller its own completions', async () => {
    const inner = echoPolicy();
    const policy = batchingPolicy(inner);
    const [a, b, c] = await Promise.all([policy.generate([req(1, 2)]), policy.generate([req(2), req(3)]), policy.generate([req(4, 3)])]);
    assert.deepEqual(inner.batches, [4]);
    assert.deepEqual(a!.map((x) => x.map((y) => y.text)), [['1.0', '1.1']]);
    assert.deepEqual(b!.map((x) => x.map((y) => y.text)), [['2.0'], ['3.0']]);
    assert.deepEqual(c!.map((x) => x.map((y) => y.text)), [['4.0', '4.1', '4.2']]);
    assert.equal(policy.version, 7);
    assert.equal(policy.name, 'echo');
  });

  it('flushes at maxRequests', async () => {
    const inner = echoPolicy();
    const policy = batchingPolicy(inner, { maxRequests: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((s) => policy.generate([req(s)])));
    assert.deepEqual(inner.batches, [2, 2, 1]);
    assert.throws(() => batchingPolicy(inner, { maxRequests: 0 }), /maxRequests must be an integer >= 1/);
  });

  it('an aborting caller is rejected alone; the merged call aborts only when every caller has', async () => {
    const inner = echoPolicy();
    let release!: () => void;
    inner.hold = new Promise((r) => (release = r));
    const policy = batchingPolicy(inner);
    const c1 = new AbortController();
    const c2 = new AbortController();
    const p1 = policy.generate([req(1)], { signal: c1.signal });
    const p2 = policy.generate([req(2)], { signal: c2.signal });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(inner.batches, [2]);
    c1.abort();
    await assert.rejects(p1, { name: 'AbortError' });
    assert.equal(inner.signals[0]!.aborted, false, 'the other caller still waits');
    c2.abort();
    assert.equal(inner.signals[0]!.aborted, true, 'every caller aborted: the merged call is aborted');
    await assert.rejects(p2, { name: 'AbortError' });
    release();
  });

  it('propagates a failure of the wrapped policy to every caller in the batch', async () => {
    const failing: Policy = { name: 'f', kind: 'fake', version: 0, generate: async () => { throw new Error('out of memory'); } };
    const policy = batchingPolicy(failing);
    const results = await Promise.allSettled([policy.generate([req(1)]), policy.generate([req(2)])]);
    assert.ok(results.every((r) => r.status === 'rejected' && /out of memory/.test(String(r.reason))));
  });

  it('batches the generations of concurrent episodes without changing their events', async () => {
    const env = counterEnv();
    const play = async (policy: Policy) => {
      const contexts = planEpisodes({
        environment: env, split: 'train', count: 6, seed: 2, branches: 3, reward: counterReward(),
        seats: env.seats.map((s) => ({ name: s.name, role: counterRole(), policy, sampling: SAMPLING })),
      });
      return lastValueFrom(runEpisodes(contexts, { concurrency: 3 }).pipe(toArray()));
    };
    const oracle = createOraclePolicy('o');
    const calls: number[] = [];
    const counted: Policy & { scripted: true } = {
      name: 'o', kind: 'oracle', version: 0, scripted: true,
      generate: (reqs, opts) => (calls.push(reqs.length), oracle.generate(reqs, opts)),
    };
    const plain = await play(oracle);
    const batched = await play(batchingPolicy(counted));
    assert.ok(isScriptedPolicy(batchingPolicy(counted)), 'the scripted marker passes through');
    const sort = (events: typeof plain) => [...events].sort((x, y) => (x.episodeId < y.episodeId ? -1 : x.episodeId > y.episodeId ? 1 : 0));
    assert.deepEqual(sort(batched), sort(plain), 'same events per episode');
    assert.ok(Math.max(...calls) > 1, `some calls merged requests of several episodes: ${calls.join(',')}`);
    assert.equal(calls.reduce((a, b) => a + b, 0), batched.filter(isEvent('select')).length);
  });
});
