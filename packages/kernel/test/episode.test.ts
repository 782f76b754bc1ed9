import assert from 'node:assert/strict';
import { lastValueFrom, toArray } from 'rxjs';
import type { GenerationRequest, Policy, SamplingParams, SeatContext } from '../src/contracts/index.js';
import {
  deepFreeze,
  isEvent,
  mixReward,
  playEpisode,
  runEpisode,
  selectBranch,
  type EpisodeContext,
  type EpisodeEvent,
  type SeatBinding,
} from '../src/episode/index.js';
import {
  completion,
  counterEnv,
  counterReward,
  counterRole,
  hangingPolicy,
  listPolicy,
  type CounterEnv,
  type CounterInstance,
} from './helpers/counter.js';
import { assertAtGrpoInvariants } from './helpers/invariants.js';

const SAMPLING: SamplingParams = { temperature: 1, topP: 1, topK: 0, maxTokens: 4 };

function seats(env: CounterEnv, policies: Record<string, Policy>, extra: Partial<SeatBinding> = {}): SeatBinding[] {
  const role = counterRole();
  return env.seats.map((s) => ({ name: s.name, role, policy: policies[s.name]!, sampling: SAMPLING, ...extra }));
}

function ctx(
  env: CounterEnv,
  policies: Record<string, Policy>,
  over: Partial<EpisodeContext<CounterInstance>> = {},
): EpisodeContext<CounterInstance> {
  return {
    environment: env,
    instance: { start: 0, target: 100 },
    instanceUid: 'train/0/x',
    split: 'train',
    seats: seats(env, policies),
    reward: counterReward(),
    branches: 3,
    seed: 7,
    ...over,
  } as EpisodeContext<CounterInstance>;
}

const play = (c: EpisodeContext): Promise<EpisodeEvent[]> => lastValueFrom(runEpisode(c).pipe(toArray()));

describe('episode: runEpisode', () => {
  it('is cold: nothing happens before subscribe, and each subscription plays afresh', async () => {
    const env = counterEnv();
    let resets = 0;
    const counting = { ...env, reset: (i: CounterInstance) => (resets++, env.reset(i)) };
    const p = listPolicy('p', (r) => Array.from({ length: r.n }, () => '+1'));
    const obs = runEpisode(ctx(counting as CounterEnv, { a: p, b: p }));
    await new Promise((r) => setImmediate(r));
    assert.equal(resets, 0);
    assert.equal(p.requests.length, 0);
    assert.equal(env.steps.length, 0);
    const first = await lastValueFrom(obs.pipe(toArray()));
    assert.equal(resets, 1);
    assert.ok(env.steps.length > 0);
    const second = await lastValueFrom(obs.pipe(toArray()));
    assert.equal(resets, 2);
    assert.deepEqual(second, first, 'same context and seed give the same events');
  });

  it('unsubscribing aborts the in-flight generation through the AbortSignal', async () => {
    const env = counterEnv();
    const hang = hangingPolicy('slow');
    let errored: unknown;
    let completed = false;
    const events: EpisodeEvent[] = [];
    const sub = runEpisode(ctx(env, { a: hang, b: hang })).subscribe({
      next: (e) => events.push(e),
      error: (e) => (errored = e),
      complete: () => (completed = true),
    });
    await hang.started;
    assert.equal(hang.aborted, false);
    sub.unsubscribe();
    assert.equal(hang.aborted, true, 'the policy saw its signal fire');
    await new Promise((r) => setImmediate(r));
    assert.equal(errored, undefined, 'an abort is not an error');
    assert.equal(completed, false);
    assert.equal(env.steps.length, 0, 'no step after the abort');
    assert.deepEqual(
      events.map((e) => e.type),
      ['reset', 'turn'],
    );
  });

  it('passes the signal to role.parse and stops before stepping when aborted during parsing', async () => {
    const env = counterEnv();
    const role = counterRole();
    let seen: AbortSignal | undefined;
    let release!: () => void;
    const parsing = new Promise<void>((r) => (release = r));
    const slowRole = {
      ...role,
      parse: (text: string, seat: { signal?: AbortSignal }) => {
        seen = seat.signal;
        release();
        return new Promise<never>((_res, rej) =>
          seat.signal!.addEventListener('abort', () => rej(seat.signal!.reason)),
        );
      },
    };
    const p = listPolicy('p', (r) => Array.from({ length: r.n }, () => '+1'));
    const c = ctx(
      env,
      { a: p, b: p },
      { seats: env.seats.map((s) => ({ name: s.name, role: slowRole as typeof role, policy: p, sampling: SAMPLING })) },
    );
    const sub = runEpisode(c).subscribe();
    await parsing;
    assert.ok(seen && !seen.aborted);
    sub.unsubscribe();
    assert.equal(seen!.aborted, true);
    await new Promise((r) => setImmediate(r));
    assert.equal(env.steps.length, 0);
  });

  it('samples K branches from one request and one prompt, steps each branch once on the same state', async () => {
    const env = counterEnv();
    const a = listPolicy('pa', (r) => ['+0', '+2', '+1'].slice(0, r.n));
    const b = listPolicy('pb', (r) => ['-1', '+1', 'oops'].slice(0, r.n));
    const events = await play(ctx(env, { a, b }, { maxTurns: 2 }));
    // one request per (turn, seat), n = K
    assert.equal(a.requests.length, 2);
    assert.equal(b.requests.length, 2);
    for (const r of [...a.requests, ...b.requests]) assert.equal(r.n, 3);
    // K step calls per (turn, seat), all on the same state object
    assert.equal(env.steps.length, 2 * 2 * 3);
    for (let g = 0; g < 4; g++) {
      const group = env.steps.slice(3 * g, 3 * g + 3);
      assert.ok(
        group.every((s) => s.state === group[0]!.state && s.seat === group[0]!.seat),
        'every branch of a group steps the same state',
      );
    }
    const samples = events.filter(isEvent('step'));
    assert.equal(samples.length, 12);
    assert.ok(samples.every((s) => s.policyVersion === 3 && s.role === 'counter-role-v0'));
    assert.equal(samples.filter((s) => s.parseError !== undefined).length, 2, "seat b's 'oops' fails to parse twice");
    await assertAtGrpoInvariants(events, {
      environment: counterEnv(),
      instanceOf: () => ({ start: 0, target: 100 }),
      roleOf: () => counterRole(),
      branches: 3,
    });
  });

  it('emits each (turn, seat, branch) once, sample and outcome together, then the selection that closes its group', async () => {
    const env = counterEnv();
    const p = listPolicy('p', () => ['+1', 'oops', '+2']);
    const events = await play(ctx(env, { a: p, b: p }, { maxTurns: 2 }));
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'reset',
        'turn',
        'step',
        'step',
        'step',
        'select',
        'step',
        'step',
        'step',
        'select',
        'turn',
        'step',
        'step',
        'step',
        'select',
        'step',
        'step',
        'step',
        'select',
        'end',
      ],
    );
    const steps = events.filter(isEvent('step'));
    assert.deepEqual(
      new Set(steps.map((s) => `${s.turn}/${s.seat}/${s.branch}`)).size,
      steps.length,
      'no (turn, seat, branch) twice',
    );
    const first = steps[0]!;
    // what the policy wrote and what the environment answered, in one record
    assert.equal(first.completion, '+1');
    assert.equal(first.action, 1);
    assert.deepEqual(first.terms, { team: 1, penalty: 0 });
    assert.deepEqual(first.signals, { progress: 1, invalid: 0 });
    assert.deepEqual(first.info, { value: 1 });
    assert.equal(first.selected, false);
    assert.equal(steps[1]!.parseError, 'not an integer: "oops"');
    assert.deepEqual(steps[1]!.terms, { team: 0, penalty: -1 });
    assert.equal(steps[2]!.selected, true, 'the best branch (+2) is the selected one');
  });

  it('steps the move a scripted policy gives with its completion, without parsing the text', async () => {
    const env = counterEnv();
    let parses = 0;
    const role = {
      ...counterRole(),
      parse: (text: string, seat: SeatContext) => (parses++, counterRole().parse(text, seat)),
    };
    const giving: Policy & { scripted: true } = {
      name: 'giver',
      kind: 'fake',
      version: 0,
      scripted: true,
      generate: async (requests) =>
        requests.map((r) =>
          Array.from({ length: r.n }, () => ({
            ...completion('two'),
            move: { kind: 'action' as const, action: 2, text: 'two', details: { why: 'given' } },
          })),
        ),
    };
    const c = ctx(env, { a: giving, b: giving }, { maxTurns: 1, branches: 1 });
    const events = await play({ ...c, seats: c.seats.map((s) => ({ ...s, role })) });
    assert.equal(parses, 0, 'the role never parsed the text');
    assert.deepEqual(
      env.steps.map((s) => s.move),
      [
        { kind: 'action', action: 2, text: 'two', details: { why: 'given' } },
        { kind: 'action', action: 2, text: 'two', details: { why: 'given' } },
      ],
    );
    const steps = events.filter(isEvent('step'));
    assert.deepEqual(
      steps.map((s) => [s.completion, s.action, s.parseError, s.details]),
      [
        ['two', 2, undefined, { why: 'given' }],
        ['two', 2, undefined, { why: 'given' }],
      ],
    );
  });

  it("a seat's own branches replace the episode's K for that seat (algorithm.seatBranches)", async () => {
    const env = counterEnv();
    const a = listPolicy('pa', (r) => ['+0', '+2', '+1'].slice(0, r.n));
    const b = listPolicy('pb', (r) => ['-1', '+1', '+0'].slice(0, r.n));
    const c = ctx(env, { a, b }, { maxTurns: 2 });
    const events = await play({ ...c, seats: c.seats.map((s) => (s.name === 'a' ? { ...s, branches: 1 } : s)) });
    assert.deepEqual(
      a.requests.map((r) => r.n),
      [1, 1],
      'seat a samples once per turn',
    );
    assert.deepEqual(
      b.requests.map((r) => r.n),
      [3, 3],
    );
    const samples = events.filter(isEvent('step'));
    assert.equal(samples.filter((e) => e.seat === 'a').length, 2);
    assert.equal(samples.filter((e) => e.seat === 'b').length, 6);
    assert.ok(
      events
        .filter(isEvent('select'))
        .filter((e) => e.seat === 'a')
        .every((e) => e.branch === 0 && e.rewards.length === 1),
    );
    const bad = { ...c, seats: c.seats.map((s) => (s.name === 'b' ? { ...s, branches: 0 } : s)) };
    await assert.rejects(play(bad), /seat 'b' branches must be an integer >= 1, got 0/);
  });

  it('a greedy branch (algorithm.greedyBranch): branch 0 is decoded at T = 0 in its own request, the other K − 1 are sampled', async () => {
    const env = counterEnv();
    // the fake answers '+2' greedily and '+1' when sampling, so the greedy branch is visible in the group
    const a = listPolicy('pa', (r) => Array.from({ length: r.n }, () => (r.sampling.temperature === 0 ? '+2' : '+1')));
    const b = listPolicy('pb', (r) => Array.from({ length: r.n }, () => (r.sampling.temperature === 0 ? '+0' : '+1')));
    const c = ctx(env, { a, b }, { maxTurns: 2 });
    const warm: SamplingParams = { ...SAMPLING, temperature: 0.7 };
    const events = await play({
      ...c,
      seats: c.seats.map((s) => (s.name === 'a' ? { ...s, sampling: warm, greedyBranch: true } : s)),
    });
    // seat a: per turn one greedy request (n = 1, log-probs at its T) and one sampled request (n = K − 1), same prompt and seed
    assert.deepEqual(
      a.requests.map((r) => [r.n, r.sampling.temperature, r.logprobTemperature]),
      [
        [1, 0, 0.7],
        [2, 0.7, undefined],
        [1, 0, 0.7],
        [2, 0.7, undefined],
      ],
    );
    assert.deepEqual(a.requests[0]!.messages, a.requests[1]!.messages);
    assert.equal(a.requests[0]!.seed, a.requests[1]!.seed);
    assert.deepEqual(
      b.requests.map((r) => [r.n, r.sampling.temperature]),
      [
        [3, 1],
        [3, 1],
      ],
      'a seat without it is unchanged',
    );
    const samples = events.filter(isEvent('step'));
    const ofA = samples.filter((s) => s.seat === 'a');
    assert.deepEqual(
      ofA.map((s) => [s.branch, s.completion, s.greedy ?? false, s.temperature]),
      [
        [0, '+2', true, 0.7],
        [1, '+1', false, 0.7],
        [2, '+1', false, 0.7],
        [0, '+2', true, 0.7],
        [1, '+1', false, 0.7],
        [2, '+1', false, 0.7],
      ],
    );
    assert.ok(samples.filter((s) => s.seat === 'b').every((s) => s.greedy === undefined));
    await assertAtGrpoInvariants(events, {
      environment: counterEnv(),
      instanceOf: () => ({ start: 0, target: 100 }),
      roleOf: () => counterRole(),
      branches: 3,
    });
    // with K = 1 there is no greedy branch: the one branch is sampled
    const a1 = listPolicy('pa', (r) => Array.from({ length: r.n }, () => '+1'));
    await play({
      ...c,
      seats: ctx(env, { a: a1, b }).seats.map((s) => (s.name === 'a' ? { ...s, branches: 1, greedyBranch: true } : s)),
      maxTurns: 1,
    });
    assert.deepEqual(
      a1.requests.map((r) => [r.n, r.sampling.temperature]),
      [[1, 1]],
    );
  });

  it('continueFromGreedy (algorithm.selection: greedy): the seat continues from its greedy branch even when a sample is better', async () => {
    const env = counterEnv();
    const a = listPolicy('pa', (r) =>
      Array.from({ length: r.n }, (_, i) => (r.sampling.temperature === 0 ? '+0' : `+${i + 1}`)),
    );
    const b = listPolicy('pb', (r) => ['+0', '+1', '+2'].slice(0, r.n));
    const c = ctx(env, { a, b }, { maxTurns: 2 });
    const greedySeatA = (over: Partial<SeatBinding>) => ({
      ...c,
      seats: c.seats.map((s) => (s.name === 'a' ? { ...s, greedyBranch: true, ...over } : s)),
    });
    const best = await play(greedySeatA({}));
    const greedy = await play(greedySeatA({ continueFromGreedy: true }));
    const selectsOf = (events: EpisodeEvent[], seat: string) =>
      events
        .filter(isEvent('select'))
        .filter((e) => e.seat === seat)
        .map((e) => [e.branch, e.reason]);
    assert.deepEqual(
      selectsOf(best, 'a'),
      [
        [2, 'max'],
        [2, 'max'],
      ],
      "without it seat a continues from its best sample ('+2')",
    );
    assert.deepEqual(selectsOf(greedy, 'a'), [
      [0, 'greedy'],
      [0, 'greedy'],
    ]);
    assert.deepEqual(
      selectsOf(greedy, 'b'),
      [
        [2, 'max'],
        [2, 'max'],
      ],
      'a seat without a greedy branch still selects its best',
    );
    // seat b observes the state of a's greedy branch: its prompt shows the counter a's '+0' left
    const promptsOfB = (events: EpisodeEvent[]) =>
      events
        .filter(isEvent('step'))
        .filter((e) => e.seat === 'b' && e.branch === 0)
        .map((e) => e.prompt);
    assert.notDeepEqual(promptsOfB(greedy), promptsOfB(best));
    const stepsOfB = env.steps.filter((s) => s.seat === 'b').slice(-6);
    assert.deepEqual(
      stepsOfB.map((s) => (s.state as { value: number }).value),
      [0, 0, 0, 2, 2, 2],
      'b steps on 0, then on 0 + 2 (its own best)',
    );
    // without a greedy branch there is nothing to continue from: the flag alone changes nothing
    const plain = await play({
      ...c,
      seats: c.seats.map((s) => (s.name === 'a' ? { ...s, continueFromGreedy: true } : s)),
    });
    assert.ok(plain.filter(isEvent('select')).every((e) => e.reason !== 'greedy'));
  });

  it('a policy that answers a greedy-branch call with too few results fails with the seat named', async () => {
    const env = counterEnv();
    const one: Policy = {
      name: 'one',
      kind: 'fake',
      version: 0,
      generate: async (reqs) => [
        reqs.map(() => ({ text: '+1', promptIds: [], tokenIds: [], logprobs: [], finishReason: 'stop' as const })),
      ],
    };
    const c = ctx(env, { a: one, b: one }, { maxTurns: 1 });
    await assert.rejects(
      play({ ...c, seats: c.seats.map((s) => ({ ...s, greedyBranch: true })) }),
      /turn 0, seat 'a': policy 'one' \(fake\) returned 1 results for 2 requests/,
    );
  });

  it("seats act sequentially: the next seat sees the previous seat's SELECTED result in the same turn", async () => {
    const env = counterEnv();
    const a = listPolicy('pa', () => ['+0', '+2', '+1']);
    const b = listPolicy('pb', () => ['+0', '+0', '+0']);
    const events = await play(ctx(env, { a, b }, { maxTurns: 1 }));
    const selA = events.filter(isEvent('select')).find((e) => e.seat === 'a')!;
    assert.equal(selA.branch, 1, 'the +2 branch has the maximum reward');
    assert.deepEqual(selA.rewards, [0, 2, 1]);
    const promptB = b.requests[0]!.messages.at(-1)!.content;
    assert.match(promptB, /value=2\b/, 'seat b is prompted from the state after +2');
    assert.match(promptB, /a: 2/, "seat b sees seat a's selected move");
    // seat b's K branches all step on the selected state of seat a
    const bSteps = env.steps.filter((s) => s.seat === 'b');
    assert.ok(bSteps.every((s) => s.state.value === 2));
  });

  it('ends on success with the selected branch, summing selected rewards per seat', async () => {
    const env = counterEnv();
    const a = listPolicy('pa', () => ['+2', '+1']);
    const b = listPolicy('pb', () => ['+0', '+1']);
    const events = await play(ctx(env, { a, b }, { instance: { start: 0, target: 5 }, branches: 2 }));
    const end = events.at(-1)!;
    assert.equal(end.type, 'end');
    if (end.type !== 'end') return;
    // t0: a +2 (2), b +1 (3); t1: a +2 (5) → success, episode ends before b acts
    assert.equal(end.success, true);
    assert.equal(end.turns, 2);
    assert.deepEqual(end.termination, { terminated: true, truncated: false });
    assert.deepEqual(end.rewards, { a: 4, b: 1 });
    assert.equal(events.filter(isEvent('select')).length, 3);
  });

  it('truncates at the turn limit', async () => {
    const env = counterEnv({ maxTurns: 3 });
    const p = listPolicy('p', (r) => Array.from({ length: r.n }, () => '+0'));
    const events = await play(ctx(env, { a: p, b: p }, { branches: 1 }));
    const end = events.at(-1)!;
    assert.ok(end.type === 'end');
    assert.equal(end.turns, 3);
    assert.equal(end.success, false);
    assert.deepEqual(end.termination, { terminated: false, truncated: true });
    assert.deepEqual(
      events.filter(isEvent('turn')).map((t) => t.turn),
      [0, 1, 2],
    );
  });

  it('breaks ties deterministically from (seed, episode, turn, seat), not always branch 0', async () => {
    const env = counterEnv({ maxTurns: 4 });
    const p = listPolicy('p', (r) => Array.from({ length: r.n }, () => '+0'));
    const run = async (seed: number, episodeId: string): Promise<number[]> =>
      (await play(ctx(env, { a: p, b: p }, { branches: 4, seed, episodeId }))).filter(isEvent('select')).map((s) => {
        assert.equal(s.reason, 'tie-random');
        return s.branch;
      });
    const x = await run(1, 'e1');
    assert.deepEqual(await run(1, 'e1'), x, 'same seed and episode: same choices');
    const all = [x, await run(2, 'e1'), await run(1, 'e2'), await run(3, 'e3')].flat();
    assert.ok(new Set(all).size > 1, `tie-breaks vary: ${all.join(',')}`);
  });

  it('prefers a terminal-success branch among tied maxima', async () => {
    const env = counterEnv();
    const a = listPolicy('pa', () => ['+0', '+0', '+1', '+0']);
    const b = listPolicy('pb', () => ['+0', '+0', '+0', '+0']);
    const zero: SeatBinding['rewardMix'] = { alpha: 0, weights: { penalty: 0 } };
    const c = ctx(env, { a, b }, { instance: { start: 2, target: 3 }, branches: 4 });
    const events = await play({ ...c, seats: c.seats.map((s) => ({ ...s, rewardMix: zero })) });
    const sel = events.filter(isEvent('select'))[0]!;
    assert.deepEqual(sel.rewards, [0, 0, 0, 0]);
    assert.equal(sel.branch, 2);
    assert.equal(sel.reason, 'tie-success');
    assert.equal((events.at(-1) as { success: boolean }).success, true);
  });

  it('mixes reward terms per seat and logs every term', async () => {
    const env = counterEnv();
    const a = listPolicy('pa', () => ['+2', 'bad']);
    const b = listPolicy('pb', () => ['+1', '+1']);
    const c = ctx(env, { a, b }, { branches: 2, maxTurns: 1 });
    const mixed = {
      ...c,
      seats: c.seats.map((s) => (s.name === 'a' ? { ...s, rewardMix: { alpha: 0.5, weights: { penalty: 3 } } } : s)),
    };
    const rewards = (await play(mixed)).filter(isEvent('step'));
    const a0 = rewards.find((r) => r.seat === 'a' && r.branch === 0)!;
    const a1 = rewards.find((r) => r.seat === 'a' && r.branch === 1)!;
    assert.deepEqual(a0.terms, { team: 2, penalty: 0 });
    assert.equal(a0.reward, 1);
    assert.deepEqual(a1.terms, { team: 0, penalty: -1 });
    assert.equal(a1.reward, -3);
    const b0 = rewards.find((r) => r.seat === 'b' && r.branch === 0)!;
    assert.equal(b0.reward, 1, 'default mix: alpha 1, weights 1');
  });

  it('sends the scripted context only to scripted policies, and the grammar only when asked', async () => {
    const env = counterEnv();
    const scripted = listPolicy('s', (r) => Array.from({ length: r.n }, () => '+1'), {
      scripted: true,
    } as Partial<Policy>);
    const model = listPolicy('m', (r) => Array.from({ length: r.n }, () => '+1'));
    await play(ctx(env, { a: scripted, b: model }, { maxTurns: 1, grammar: true }));
    const rs = scripted.requests[0]!;
    const rm = model.requests[0]!;
    assert.ok(rs.scripted);
    assert.equal((rs.scripted.state as { value: number }).value, 0);
    assert.equal(rs.scripted.seat.seat, 'a');
    assert.equal(rm.scripted, undefined);
    assert.deepEqual(rm.grammar, { kind: 'regex', pattern: '[+-]?[0-2]' });
    const plain = listPolicy('m', (r) => Array.from({ length: r.n }, () => '+1'));
    await play(ctx(counterEnv(), { a: plain, b: plain }, { maxTurns: 1 }));
    assert.equal(plain.requests[0]!.grammar, undefined);
  });

  it('derives a distinct, reproducible request seed per (episode, turn, seat)', async () => {
    const p = listPolicy('p', (r) => Array.from({ length: r.n }, () => '+0'));
    await play(ctx(counterEnv(), { a: p, b: p }, { maxTurns: 2 }));
    const seeds = p.requests.map((r: GenerationRequest) => r.seed);
    assert.equal(new Set(seeds).size, 4);
    const q = listPolicy('p', (r) => Array.from({ length: r.n }, () => '+0'));
    await play(ctx(counterEnv(), { a: q, b: q }, { maxTurns: 2 }));
    assert.deepEqual(
      q.requests.map((r) => r.seed),
      seeds,
    );
  });

  it('awaits async environments', async () => {
    const env = counterEnv({ async: true });
    const p = listPolicy('p', () => ['+2', '+1']);
    const events = await play(ctx(env, { a: p, b: p }, { instance: { start: 0, target: 4 }, branches: 2 }));
    assert.equal((events.at(-1) as { success: boolean }).success, true);
    await assertAtGrpoInvariants(events, {
      environment: counterEnv(),
      instanceOf: () => ({ start: 0, target: 4 }),
      roleOf: () => counterRole(),
      branches: 2,
    });
  });

  it('freezeStates turns a state-mutating environment into a clear error', async () => {
    const p = listPolicy('p', (r) => Array.from({ length: r.n }, () => '+1'));
    await assert.rejects(
      play(ctx(counterEnv({ mutate: true }), { a: p, b: p }, { freezeStates: true })),
      /turn 0, seat 'a'.*environment step failed/,
    );
    // without freezing, the bug goes unnoticed (which is why the option exists)
    await play(ctx(counterEnv({ mutate: true }), { a: p, b: p }, { maxTurns: 1 }));
  });

  it('rejects seats that are not the environment seats in turn order', async () => {
    const env = counterEnv();
    const p = listPolicy('p', () => ['+1']);
    const c = ctx(env, { a: p, b: p });
    await assert.rejects(
      play({ ...c, seats: [...c.seats].reverse() }),
      /seats must be exactly the environment's seats in turn order \[a, b\], got \[b, a\]/,
    );
    await assert.rejects(play({ ...c, branches: 0 }), /branches must be an integer >= 1/);
    await assert.rejects(play({ ...c, maxTurns: 99 }), /maxTurns must be an integer in \[1, 4\]/);
  });

  it('names the policy when it returns the wrong number of completions or fails', async () => {
    const env = counterEnv();
    const short = listPolicy('short', () => ['+1']);
    await assert.rejects(
      play(ctx(env, { a: short, b: short })),
      /policy 'short' \(fake\) returned 1 completions for a request with n = 3/,
    );
    const failing: Policy = {
      name: 'boom',
      kind: 'fake',
      version: 0,
      generate: async () => {
        throw new Error('server down');
      },
    };
    await assert.rejects(
      play(ctx(env, { a: failing, b: failing })),
      /seat 'a': policy 'boom' \(fake\) failed to generate: server down/,
    );
  });

  it('records a throwing role.parse as an invalid move instead of crashing', async () => {
    const env = counterEnv();
    const role = {
      ...counterRole(),
      parse: () => {
        throw new Error('regex bug');
      },
    };
    const p = listPolicy('p', (r) => Array.from({ length: r.n }, () => '+1'));
    const c = ctx(env, { a: p, b: p }, { maxTurns: 1, branches: 1 });
    const events = await play({ ...c, seats: c.seats.map((s) => ({ ...s, role })) });
    const s = events.filter(isEvent('step'));
    assert.ok(s.every((x) => /role 'counter-role-v0' threw while parsing.*regex bug/.test(x.parseError ?? '')));
  });

  it('events are JSON-serialisable', async () => {
    const p = listPolicy('p', () => ['+1', '+2', 'x']);
    const events = await play(ctx(counterEnv(), { a: p, b: p }));
    assert.deepEqual(JSON.parse(JSON.stringify(events)), events);
  });

  it('playEpisode emits the same events as runEpisode and returns the end event', async () => {
    const p = listPolicy('p', () => ['+1', '+2', '-1']);
    const c = ctx(counterEnv(), { a: p, b: p });
    const out: EpisodeEvent[] = [];
    const end = await playEpisode(c, (e) => out.push(e));
    assert.deepEqual(out.at(-1), end);
    assert.deepEqual(await play(c), out);
  });
});

describe('episode: selection and reward mixing', () => {
  const key = { seed: 1, episodeId: 'e', turn: 0, seat: 'a' };
  it('selects the unique maximum', () => {
    assert.deepEqual(
      selectBranch(
        [
          { reward: 1, success: false, done: false },
          { reward: 3, success: false, done: false },
          { reward: 2, success: true, done: true },
        ],
        key,
      ),
      { branch: 1, reason: 'max' },
    );
  });
  it('among ties prefers a terminal success, then a seeded random choice among the remaining', () => {
    const o = (reward: number, success = false, done = false) => ({ reward, success, done });
    assert.deepEqual(selectBranch([o(1), o(1, true, false), o(1, true, true), o(0, true, true)], key), {
      branch: 2,
      reason: 'tie-success',
    });
    const winners = new Set<number>();
    for (let t = 0; t < 20; t++) {
      const s = selectBranch([o(0), o(1, true, true), o(1), o(1, true, true)], { ...key, turn: t });
      assert.equal(s.reason, 'tie-random');
      assert.ok(s.branch === 1 || s.branch === 3, 'only the successful tied branches');
      winners.add(s.branch);
    }
    assert.equal(winners.size, 2);
    assert.throws(() => selectBranch([], key), /no branches/);
  });
  it('mixReward: alpha·team + Σ weights·terms, default weight 1, clear errors', () => {
    assert.equal(mixReward({ team: 2, local: 1, format: -1 }, { alpha: 0.5, weights: { format: 2 } }), 1 + 1 - 2);
    assert.equal(mixReward({ local: 1 }, { alpha: 0, weights: {} }), 1);
    assert.throws(() => mixReward({ local: 1 }, { alpha: 1, weights: {} }), /no 'team' term but alpha is 1/);
    assert.throws(() => mixReward({ team: NaN }, { alpha: 1, weights: {} }), /term 'team' is NaN/);
    assert.throws(() => mixReward({ team: 1 }, { alpha: 1, weights: { locl: 1 } }), /weight given for term 'locl'/);
    assert.throws(
      () => mixReward({ team: 1 }, { alpha: 1, weights: { team: 2 } }),
      /weights.team is not used.*set alpha/,
    );
  });
  it('deepFreeze freezes nested values, including under an already-frozen top level', () => {
    const v = Object.freeze({ a: { b: [1, { c: 2 }] } });
    deepFreeze(v);
    assert.ok(Object.isFrozen(v.a) && Object.isFrozen(v.a.b) && Object.isFrozen(v.a.b[1]));
  });
});
