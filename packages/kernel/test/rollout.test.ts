import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, lastValueFrom, take, tap, toArray } from 'rxjs';
import type { Completion, GenerationRequest, Policy, SamplingParams } from '../src/contracts/index.js';
import { groupAdvantages } from '../src/algorithms/index.js';
import { isEvent, type EpisodeEvent, type SeatBinding } from '../src/episode/index.js';
import {
  collectEpisodes,
  planEpisodes,
  runEpisodes,
  summarize,
  SummaryAggregator,
  toGroups,
  TraceWriter,
  type TraceRecord,
} from '../src/rollout/index.js';
import {
  completion,
  counterEnv,
  counterReward,
  counterRole,
  hangingPolicy,
  listPolicy,
  type CounterEnv,
} from './helpers/counter.js';
import { assertAtGrpoInvariants } from './helpers/invariants.js';

const SAMPLING: SamplingParams = { temperature: 1, topP: 1, topK: 0, maxTokens: 4 };
const seatsFor = (env: CounterEnv, policy: Policy): SeatBinding[] =>
  env.seats.map((s) => ({ name: s.name, role: counterRole(), policy, sampling: SAMPLING }));

/** A policy that answers after a few event-loop ticks and tracks how many generations are in flight. */
function trackingPolicy(texts: string[]): Policy & { inFlight: number; maxInFlight: number; calls: number } {
  const p = {
    name: 'tracking',
    kind: 'fake',
    version: 1,
    inFlight: 0,
    maxInFlight: 0,
    calls: 0,
    async generate(reqs: readonly GenerationRequest[]): Promise<Completion[][]> {
      p.calls++;
      p.inFlight++;
      p.maxInFlight = Math.max(p.maxInFlight, p.inFlight);
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      p.inFlight--;
      return reqs.map((r) => Array.from({ length: r.n }, (_, c) => completion(texts[c % texts.length]!)));
    },
  };
  return p;
}

describe('rollout: runEpisodes', () => {
  it('runs every episode with never more than `concurrency` in flight', async () => {
    const env = counterEnv({ maxTurns: 3 });
    const policy = trackingPolicy(['+1', '+0', '-1']);
    const contexts = planEpisodes({
      environment: env,
      split: 'train',
      count: 7,
      seed: 3,
      seats: seatsFor(env, policy),
      reward: counterReward(),
      branches: 3,
    });
    let open = 0;
    let maxOpen = 0;
    const events = await lastValueFrom(
      runEpisodes(contexts, { concurrency: 2 }).pipe(
        tap((e) => {
          if (e.type === 'reset') maxOpen = Math.max(maxOpen, ++open);
          if (e.type === 'end') open--;
        }),
        toArray(),
      ),
    );
    assert.equal(events.filter(isEvent('end')).length, 7);
    assert.equal(maxOpen, 2, 'episodes open at once');
    assert.equal(policy.maxInFlight, 2, 'generations in flight at once');
    const byId = new Map(contexts.map((c) => [c.episodeId!, c.instance]));
    const { groups } = await assertAtGrpoInvariants(events, {
      environment: counterEnv(),
      instanceOf: (id) => byId.get(id),
      roleOf: () => counterRole(),
      branches: 3,
    });
    assert.equal(groups, events.filter(isEvent('select')).length);
  });

  it('is cold, and unsubscribing aborts every running episode', async () => {
    const env = counterEnv();
    const hang = hangingPolicy('slow');
    const contexts = planEpisodes({
      environment: env,
      split: 'train',
      count: 5,
      seed: 1,
      seats: seatsFor(env, hang),
      reward: counterReward(),
      branches: 2,
    });
    const obs = runEpisodes(contexts, { concurrency: 3 });
    await new Promise((r) => setImmediate(r));
    assert.equal(hang.calls, 0);
    const sub = obs.subscribe();
    await hang.started;
    assert.equal(hang.calls, 3);
    sub.unsubscribe();
    assert.equal(hang.aborted, true);
    assert.equal(env.steps.length, 0);
    assert.throws(() => runEpisodes([], { concurrency: 0 }), /concurrency must be an integer >= 1/);
  });

  it('planEpisodes gives unique, prefixed uids and distinct episode ids for repeats', () => {
    const env = counterEnv();
    const p = listPolicy('p', () => ['+1']);
    const plan = planEpisodes({
      environment: env,
      split: 'validation',
      count: 3,
      startIndex: 5,
      seed: 9,
      uidPrefix: 'step-2/',
      repeats: 2,
      seats: seatsFor(env, p),
      reward: counterReward(),
    });
    assert.equal(plan.length, 6);
    assert.equal(new Set(plan.map((c) => c.instanceUid)).size, 3);
    assert.equal(new Set(plan.map((c) => c.episodeId)).size, 6);
    assert.match(plan[0]!.instanceUid, /^step-2\/validation\/5\/[0-9a-f]{12}$/);
    assert.equal(plan[1]!.episodeId, `${plan[1]!.instanceUid}#1`);
    assert.deepEqual(plan[0]!.instance, env.instance('validation', 5, 9));
  });
});

describe('rollout: records, groups and collectEpisodes', () => {
  it('gathers step records (sample and outcome together) into groups of K and episodes', async () => {
    const env = counterEnv({ maxTurns: 2 });
    const p = listPolicy('p', () => ['+1', 'nope', '+2']);
    const contexts = planEpisodes({
      environment: env,
      split: 'train',
      count: 3,
      seed: 5,
      seats: seatsFor(env, p),
      reward: counterReward(),
      branches: 3,
    });
    const events = runEpisodes(contexts, { concurrency: 2 });
    const episodes = await collectEpisodes(events);
    assert.equal(episodes.length, 3);
    for (const ep of episodes) {
      assert.equal(ep.steps.length, ep.groups.length * 3);
      for (const g of ep.groups) {
        assert.equal(g.steps.length, 3);
        assert.ok(g.steps.every((s) => s.turn === g.turn && s.seat === g.seat && s.instanceUid === g.instanceUid));
        assert.deepEqual(
          g.steps.map((s) => s.selected),
          [0, 1, 2].map((b) => b === g.selection.branch),
        );
        assert.deepEqual(
          g.steps.map((s) => s.reward),
          g.selection.rewards,
          'each record carries its own reward',
        );
        assert.equal(g.steps[1]!.parseError, 'not an integer: "nope"');
        assert.equal(g.steps[0]!.action, 1);
      }
      assert.equal(ep.end.type, 'end');
    }
    const steps = await lastValueFrom(events.pipe(filter(isEvent('step')), toArray()));
    assert.equal(
      steps.length,
      episodes.reduce((a, e) => a + e.steps.length, 0),
    );
    const groups = await lastValueFrom(events.pipe(toGroups(), toArray()));
    assert.equal(
      groups.length,
      episodes.reduce((a, e) => a + e.groups.length, 0),
    );
  });

  it('toGroups emits each group as soon as it closes (before the episode ends)', async () => {
    const env = counterEnv();
    const p = listPolicy('p', () => ['+0', '+0']);
    const contexts = planEpisodes({
      environment: env,
      split: 'train',
      count: 1,
      seed: 5,
      seats: seatsFor(env, p),
      reward: counterReward(),
      branches: 2,
    });
    const first = await lastValueFrom(runEpisodes(contexts, { concurrency: 1 }).pipe(toGroups(), take(1), toArray()));
    assert.equal(first.length, 1);
    assert.equal(env.steps.length, 2, 'only the first group was played');
  });
});

describe('rollout: trace writer and summary', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'troupe-trace-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes one JSONL record per step record, flushed and closed on completion', async () => {
    const env = counterEnv();
    const p = listPolicy('p', () => ['+1', 'zz', '+2', '-1']);
    const contexts = planEpisodes({
      environment: env,
      split: 'train',
      count: 4,
      seed: 11,
      seats: seatsFor(env, p),
      reward: counterReward(),
      branches: 4,
    });
    const trace = new TraceWriter(join(dir, 'nested', 'trace.jsonl'), { step: 12 });
    const events = await lastValueFrom(runEpisodes(contexts, { concurrency: 2 }).pipe(tap(trace), toArray()));
    await trace.close();
    const lines = readFileSync(trace.path, 'utf8').trimEnd().split('\n');
    const samples = events.filter(isEvent('step'));
    assert.equal(lines.length, samples.length);
    assert.equal(trace.records, samples.length);
    const records = lines.map((l) => JSON.parse(l) as TraceRecord);
    const keys = [
      'step',
      'episodeId',
      'instanceUid',
      'split',
      'turn',
      'seat',
      'role',
      'policy',
      'policyVersion',
      'branch',
      'prompt',
      'completion',
      'action',
      'parseError',
      'terms',
      'reward',
      'advantage',
      'selected',
      'done',
      'success',
    ];
    for (const r of records) {
      assert.deepEqual(Object.keys(r).sort(), [...keys].sort());
      assert.equal(r.step, 12);
      assert.equal(r.advantage, null);
      assert.equal(r.policyVersion, 3);
      if (r.completion === 'zz') {
        assert.equal(r.action, null);
        assert.match(r.parseError!, /not an integer/);
      } else assert.equal(r.parseError, null);
    }
    // every line corresponds to exactly one step record
    const ids = (x: { episodeId: string; turn: number; seat: string; branch: number }) =>
      `${x.episodeId}|${x.turn}|${x.seat}|${x.branch}`;
    assert.deepEqual(records.map(ids).sort(), samples.map(ids).sort());
  });

  it('computes advantages per closed group when asked, and writes tokens when asked', async () => {
    const env = counterEnv();
    const p = listPolicy('p', () => ['+1', '+0', '+2']);
    const contexts = planEpisodes({
      environment: env,
      split: 'train',
      count: 2,
      seed: 2,
      seats: seatsFor(env, p),
      reward: counterReward(),
      branches: 3,
    });
    const trace = new TraceWriter(join(dir, 't.jsonl'), { advantages: { std: 'biased' }, tokens: true });
    await lastValueFrom(runEpisodes(contexts, { concurrency: 1 }).pipe(tap(trace)));
    await trace.close();
    const records = readFileSync(trace.path, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as TraceRecord);
    const byGroup = new Map<string, TraceRecord[]>();
    for (const r of records) {
      const k = `${r.episodeId}|${r.turn}|${r.seat}`;
      byGroup.set(k, [...(byGroup.get(k) ?? []), r]);
    }
    for (const g of byGroup.values()) {
      const want = groupAdvantages(
        g.map((r) => r.reward),
        { std: 'biased' },
      );
      g.forEach((r, i) => assert.ok(Math.abs(r.advantage! - want[i]!) < 1e-9));
    }
    assert.ok(
      records.every(
        (r) => Array.isArray(r.tokenIds) && Array.isArray(r.logprobs) && r.temperature === SAMPLING.temperature,
      ),
    );
    assert.ok(records.some((r) => r.advantage! > 0));
  });

  it('keeps the closed groups and closes the file when the stream is unsubscribed', async () => {
    const env = counterEnv();
    const p = listPolicy('p', () => ['+0', '+1']);
    const contexts = planEpisodes({
      environment: env,
      split: 'train',
      count: 1,
      seed: 2,
      seats: seatsFor(env, p),
      reward: counterReward(),
      branches: 2,
    });
    const trace = new TraceWriter(join(dir, 'partial.jsonl'));
    await lastValueFrom(runEpisodes(contexts, { concurrency: 1 }).pipe(tap(trace), toGroups(), take(2)));
    await trace.close();
    assert.equal(readFileSync(trace.path, 'utf8').trimEnd().split('\n').length, 4);
  });

  it('reports a trace file that cannot be created or written, naming it', async () => {
    writeFileSync(join(dir, 'blocker'), 'x');
    assert.throws(
      () => new TraceWriter(join(dir, 'blocker', 'x.jsonl')),
      /Trace file .*blocker.*x\.jsonl: cannot create its folder/,
    );
    mkdirSync(join(dir, 'a-dir'));
    const bad = new TraceWriter(join(dir, 'a-dir'));
    await assert.rejects(bad.close(), /Trace file .*a-dir: EISDIR/);
  });

  it('summarizes success rate, mean turns, mean reward and parse failure rate per seat', async () => {
    const env = counterEnv({ maxTurns: 2 });
    const a = listPolicy('a', () => ['+2']);
    const b = listPolicy('b', (_r, call) => [call % 2 === 0 ? 'junk' : '+2']);
    const seats: SeatBinding[] = [
      { name: 'a', role: counterRole(), policy: a, sampling: SAMPLING },
      { name: 'b', role: counterRole(), policy: b, sampling: SAMPLING },
    ];
    // instances: start 0, target 4 → a +2, b junk, a +2 → success in turn 1 ; start 0, target 7 → never solved in 2 turns
    const contexts = [4, 7].map((target, i) => ({
      environment: env,
      instance: { start: 0, target },
      instanceUid: `u${i}`,
      split: 'train' as const,
      seats,
      reward: counterReward(),
      seed: 1,
    }));
    const events = runEpisodes(contexts, { concurrency: 1 });
    const summary = await lastValueFrom(events.pipe(summarize()));
    assert.equal(summary.episodes, 2);
    assert.equal(summary.successRate, 0.5);
    assert.equal(summary.meanTurns, 2);
    assert.equal(summary.truncatedRate, 0.5);
    // b's calls: u0 t0 junk (call 0); u1 t0 +2 (call 1), u1 t1 junk (call 2)
    assert.deepEqual(summary.parseFailureRate, { a: 0, b: 2 / 3 });
    assert.deepEqual(summary.meanReward, { a: (4 + 4) / 2, b: (-1 + 2 - 1) / 2 });
    assert.equal(summary.samples, 3 + 4);
    const agg = new SummaryAggregator();
    assert.equal(agg.result().successRate, 0);
    const empty = await lastValueFrom(runEpisodes([], { concurrency: 1 }).pipe(summarize()));
    assert.equal(empty.episodes, 0);
    assert.deepEqual(summary.greedyBeaten, {}, 'no greedy branches, no entry');
  });

  it('greedyBeaten: per seat with a greedy branch, the fraction of its groups where a sample out-scored the greedy one', async () => {
    const env = counterEnv({ maxTurns: 1 });
    // seat a: greedy '+0'; sampled '+1' in instance u0's group, '-1' in u1's → beaten in 1 of 2 groups
    const a = listPolicy('a', (r, call) =>
      Array.from({ length: r.n }, () => (r.sampling.temperature === 0 ? '+0' : call < 2 ? '+1' : '-1')),
    );
    const b = listPolicy('b', (r) => Array.from({ length: r.n }, () => '+1'));
    const seats: SeatBinding[] = [
      { name: 'a', role: counterRole(), policy: a, sampling: SAMPLING, greedyBranch: true },
      { name: 'b', role: counterRole(), policy: b, sampling: SAMPLING },
    ];
    const contexts = [0, 1].map((i) => ({
      environment: env,
      instance: { start: 0, target: 9 },
      instanceUid: `u${i}`,
      split: 'train' as const,
      seats,
      reward: counterReward(),
      seed: 1,
      branches: 3,
    }));
    const summary = await lastValueFrom(runEpisodes(contexts, { concurrency: 1 }).pipe(summarize()));
    assert.deepEqual(summary.greedyBeaten, { a: 0.5 });
  });
});

describe('rollout: trace invariants', () => {
  it('lines in a trace = step records; every group has K records sharing one prompt and the selected one has the max reward', async () => {
    const env = counterEnv();
    const p = listPolicy('p', (r: GenerationRequest, call: number) =>
      Array.from({ length: r.n }, (_, c) => ['+0', '+1', '+2', '-1', 'x'][(c + call) % 5]!),
    );
    const contexts = planEpisodes({
      environment: env,
      split: 'train',
      count: 3,
      seed: 4,
      seats: seatsFor(env, p),
      reward: counterReward(),
      branches: 5,
    });
    const events: EpisodeEvent[] = [];
    const episodes = await collectEpisodes(runEpisodes(contexts, { concurrency: 3 }).pipe(tap((e) => events.push(e))));
    for (const ep of episodes) {
      for (const g of ep.groups) {
        assert.equal(g.steps.length, 5);
        assert.ok(g.steps.every((s) => JSON.stringify(s.prompt) === JSON.stringify(g.steps[0]!.prompt)));
        assert.equal(g.steps[g.selection.branch]!.reward, Math.max(...g.steps.map((s) => s.reward)));
      }
    }
    const byId = new Map(contexts.map((c) => [c.episodeId!, c.instance]));
    await assertAtGrpoInvariants(events, {
      environment: counterEnv(),
      instanceOf: (id) => byId.get(id),
      roleOf: () => counterRole(),
      branches: 5,
    });
  });
});
