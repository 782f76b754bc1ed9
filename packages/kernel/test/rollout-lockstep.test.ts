import assert from 'node:assert/strict';
import { lastValueFrom, toArray } from 'rxjs';
import { fileURLToPath } from 'node:url';
import type {
  GenerateCallOptions,
  GenerationRequest,
  Policy,
  PolicyContribution,
  SamplingParams,
} from '../src/contracts/index.js';
import { isEvent, isScriptedPolicy, sampleSeed, type EpisodeContext } from '../src/episode/index.js';
import { LockstepBatcher, planEpisodes, runEpisodes, type LockstepOptions } from '../src/rollout/index.js';
import { PluginHost } from '../src/plugins/index.js';
import { createRng } from '../src/util/index.js';
import { counterEnv, counterReward, counterRole, type CounterEnv } from './helpers/counter.js';

const SAMPLING: SamplingParams = { temperature: 1, topP: 1, topK: 0, maxTokens: 4 };
const REPO = fileURLToPath(new URL('../../..', import.meta.url));

/** The `oracle` policy kind, from its plugin (@troupe/policy-scripted), found by kind as a spec's policy is. */
let oracleKind: PolicyContribution | undefined;
const createOraclePolicy = (name: string): Policy =>
  oracleKind!.create(name, {}, { baseDir: REPO, seed: 0, rng: createRng(0) }) as Policy;

/** The oracle, recording every call: its requests' seeds in order, its options. */
function recordingOracle(
  name = 'o',
): Policy & { scripted: true; calls: number[][]; options: (GenerateCallOptions | undefined)[]; hold?: Promise<void> } {
  const oracle = createOraclePolicy(name);
  const p: Policy & {
    scripted: true;
    calls: number[][];
    options: (GenerateCallOptions | undefined)[];
    hold?: Promise<void>;
  } = {
    name,
    kind: 'oracle',
    version: 0,
    scripted: true,
    calls: [],
    options: [],
    async generate(reqs: readonly GenerationRequest[], opts?: GenerateCallOptions) {
      p.calls.push(reqs.map((r) => r.seed));
      p.options.push(opts);
      if (p.hold) await p.hold;
      opts?.signal?.throwIfAborted();
      return oracle.generate(reqs, opts);
    },
  };
  return p;
}

/** Episodes of the counter game (two seats, one policy) and an environment whose steps take `delay()` ms. */
function contexts(env: CounterEnv, policy: Policy, count: number, branches = 1): EpisodeContext[] {
  return planEpisodes({
    environment: env,
    split: 'train',
    count,
    seed: 2,
    branches,
    reward: counterReward(),
    seats: env.seats.map((s) => ({ name: s.name, role: counterRole(), policy, sampling: SAMPLING })),
  });
}

function slowSteps(env: CounterEnv, delay: () => number): CounterEnv {
  const step = env.step.bind(env);
  return {
    ...env,
    step: (state, seat, move) => new Promise((resolve) => setTimeout(() => resolve(step(state, seat, move)), delay())),
  } as CounterEnv;
}

const play = (ctxs: EpisodeContext[], concurrency: number, lockstep?: boolean | LockstepOptions) =>
  lastValueFrom(runEpisodes(ctxs, { concurrency, ...(lockstep !== undefined ? { lockstep } : {}) }).pipe(toArray()));

const byEpisode = <T extends { episodeId: string }>(events: T[]): T[] =>
  [...events].sort((x, y) => (x.episodeId < y.episodeId ? -1 : x.episodeId > y.episodeId ? 1 : 0));

describe('rollout: lockstep batching', () => {
  before(async () => {
    oracleKind = (await new PluginHost({ baseDirs: [REPO] }).ensure('policies', 'oracle'))
      .contribution as PolicyContribution;
  });

  it("merges the running episodes' generations into one call per policy, without changing their events", async () => {
    const env = counterEnv();
    const plain = await play(contexts(env, createOraclePolicy('o'), 7, 3), 3);
    const p = recordingOracle();
    const merged = await play(contexts(env, p, 7, 3), 3, true);
    assert.deepEqual(byEpisode(merged), byEpisode(plain), 'same events per episode');
    assert.ok(
      p.calls.some((c) => c.length === 3),
      `calls merge 3 episodes: ${p.calls.map((c) => c.length).join(',')}`,
    );
    assert.ok(
      p.calls.every((c) => c.length <= 3),
      'never more than the running episodes',
    );
    assert.equal(
      p.calls.flat().length,
      merged.filter(isEvent('select')).length,
      'one request per (episode, turn, seat)',
    );
    assert.ok(
      p.options.every((o) => o?.batch === true),
      'merged calls say so (batch: true)',
    );
  });

  it("merges the same requests in the same order however long each episode's steps take", async () => {
    const runWith = async (seed: number) => {
      const rng = createRng(seed);
      const p = recordingOracle();
      // steps of 0-8 ms in a different order every run: episodes reach their next generation in another order
      await play(
        contexts(
          slowSteps(counterEnv(), () => rng.int(9)),
          p,
          9,
        ),
        4,
        true,
      );
      return p.calls;
    };
    const first = await runWith(1);
    assert.ok(first.length > 1);
    for (const seed of [2, 3]) assert.deepEqual(await runWith(seed), first);
    const immediate = recordingOracle();
    await play(contexts(counterEnv(), immediate, 9), 4, true);
    assert.deepEqual(immediate.calls, first, 'and as without any delay');
  });

  it('lists requests in episode order and splits a merged call at maxSequences', async () => {
    const p = recordingOracle();
    const ctxs = contexts(counterEnv(), p, 5, 3);
    await play(ctxs, 5, { maxSequences: 7 });
    const first = p.calls.slice(0, 3);
    assert.deepEqual(
      first.map((c) => c.length),
      [2, 2, 1],
      'K = 3 sequences each: 2 episodes per call of at most 7',
    );
    const seat = ctxs[0]!.seats[0]!.name;
    assert.deepEqual(
      first.flat(),
      ctxs.map((c) => sampleSeed(c.seed, c.episodeId ?? c.instanceUid, 0, seat)),
      'the first seat of turn 0, episode by episode',
    );
  });

  it('passes the scripted marker, name, kind and version through', () => {
    const p = { ...recordingOracle('shared'), version: 5 };
    const batcher = new LockstepBatcher(2, 2);
    const w = batcher.wrap(0, p);
    assert.ok(isScriptedPolicy(w));
    assert.equal(w.name, 'shared');
    assert.equal(w.kind, 'oracle');
    assert.equal(w.version, 5);
  });

  it('a failing policy fails the episodes of its merged call', async () => {
    const failing: Policy = {
      name: 'f',
      kind: 'fake',
      version: 0,
      generate: async () => {
        throw new Error('out of memory');
      },
    };
    await assert.rejects(play(contexts(counterEnv(), failing, 4), 4, true), /out of memory/);
  });

  it('unsubscribing aborts the merged call in flight', async () => {
    const p = recordingOracle();
    let release!: () => void;
    p.hold = new Promise((r) => (release = r));
    const sub = runEpisodes(contexts(counterEnv(), p, 3), { concurrency: 3, lockstep: true }).subscribe({
      error: () => undefined,
    });
    while (p.calls.length === 0) await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      p.calls.map((c) => c.length),
      [3],
    );
    assert.equal(p.options[0]!.signal!.aborted, false);
    sub.unsubscribe();
    assert.equal(p.options[0]!.signal!.aborted, true, 'every caller aborted: so is the merged call');
    release();
  });

  it('rejects what it cannot do with a clear error', () => {
    const env = counterEnv();
    assert.throws(
      () => runEpisodes(new Set(contexts(env, createOraclePolicy('o'), 2)), { concurrency: 2, lockstep: true }),
      /lockstep batching needs the episode contexts as an array/,
    );
    assert.throws(() => new LockstepBatcher(2, 0), /concurrency must be an integer >= 1/);
    assert.throws(() => new LockstepBatcher(2, 1, { maxSequences: 0 }), /maxSequences must be an integer >= 1/);
  });
});
