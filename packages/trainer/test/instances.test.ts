/**
 * Distinct instances: an environment addresses each index on its own, so two indices may hold the same instance. The
 * train schedule and an evaluation skip an index whose content key they already used — proven on a tiny environment
 * whose instances repeat often (a seeded draw of one of 6 values per index).
 */
import assert from 'node:assert/strict';
import { createRng, deriveSeed, type Environment, type Role, type Policy, type SeatBinding } from '@troupe/kernel';
import { DistinctIndices, InstanceSchedule, distinctIndices, evaluateTeam, instanceKeyAt } from '../src/index.js';

type Tiny = { readonly n: number };

/** Instance `index` of a split is one of `values` values, drawn from its own seeded stream: duplicates are frequent. */
function tinyEnvironment(values = 6): Environment<Tiny, { n: number; done: boolean }, string> {
  return {
    id: 'tiny-v0',
    seats: [{ name: 'solver', actionType: 'word', description: 'says a word' }],
    actionTypes: [{ name: 'word', schema: { type: 'string' }, description: 'a word' }],
    maxTurns: 1,
    instance: (split, index, seed) => ({ n: createRng(deriveSeed(seed, split, index)).int(values) }),
    instanceKey: (i) => `n=${i.n}`,
    describe: (i) => ({ ...i }),
    reset: (i) => ({ n: i.n, done: false }),
    observe: (s) => ({ task: 'Say a word.', state: String(s.n), context: [], turn: 0 }),
    step: (state) => ({
      state: { ...state, done: true },
      done: { terminated: true, truncated: false },
      success: state.n % 2 === 0,
      signals: {},
    }),
    randomAction: () => 'hi',
  };
}

const KEY = instanceKeyAt(tinyEnvironment(), 'train', 3);
/** The raw keys of indices 0..n-1 (no skipping). */
const rawKeys = (n: number, keyOf = KEY): string[] => Array.from({ length: n }, (_, i) => keyOf(i));

describe('distinct instances', () => {
  it('DistinctIndices skips an index whose instance was taken before; the raw indices do repeat', () => {
    const raw = rawKeys(12);
    assert.ok(new Set(raw).size < raw.length, 'the tiny environment repeats instances within 12 indices');
    const walk = new DistinctIndices(KEY);
    const taken = Array.from({ length: 6 }, () => walk.take());
    assert.deepEqual(new Set(taken.map(KEY)).size, 6, 'six distinct instances');
    // exactly the indices whose key is new, in order
    const expected: number[] = [];
    const seen = new Set<string>();
    for (let i = 0; expected.length < 6; i++) if (!seen.has(KEY(i)) && seen.add(KEY(i))) expected.push(i);
    assert.deepEqual(taken, expected);
    assert.ok(taken.at(-1)! > 5, 'some index was skipped');
  });

  it('a used-up split: after maxSkips duplicates in a row every later index is taken as it comes', () => {
    const walk = new DistinctIndices(KEY, 50);
    const taken = Array.from({ length: 9 }, () => walk.take());
    assert.equal(new Set(taken.slice(0, 6).map(KEY)).size, 6);
    assert.ok(walk.exhausted);
    const after = taken[6]!;
    assert.deepEqual(taken.slice(6), [after, after + 1, after + 2]);
    assert.throws(() => distinctIndices(KEY, -1), /count must be an integer >= 0, got -1/);
  });

  it('the schedule plays distinct fresh instances and resumes to the same ones from its checkpointed state', () => {
    const settings = { fraction: 0, maxReplays: 0 };
    const s = new InstanceSchedule(settings, undefined, KEY);
    const first = s.next(3).map((x) => x.index);
    const state = s.state();
    const rest = [s.next(2), s.next(1)].flat().map((x) => x.index);
    assert.deepEqual([...first, ...rest], distinctIndices(KEY, 6));
    assert.equal(new Set([...first, ...rest].map(KEY)).size, 6);
    const resumed = new InstanceSchedule(settings, state, KEY);
    assert.deepEqual(
      [resumed.next(2), resumed.next(1)].flat().map((x) => x.index),
      rest,
    );
    // without keyOf, fresh indices count up (duplicates and all)
    const plain = new InstanceSchedule(settings);
    assert.deepEqual(
      plain.next(4).map((x) => x.index),
      [0, 1, 2, 3],
    );
  });

  it('an evaluation plays the first distinct instances of its split', async () => {
    const environment = tinyEnvironment();
    const role: Role<string> = {
      id: 'word',
      produces: ['word'],
      prompt: (o) => [{ role: 'user', content: o.state }],
      parse: (text) => ({ kind: 'action', action: text, text }),
      render: (a) => a,
    };
    const policy: Policy = {
      name: 'say',
      kind: 'test',
      version: 0,
      generate: (requests) =>
        Promise.resolve(
          requests.map((r) =>
            Array.from({ length: r.n }, () => ({
              text: 'hi',
              promptIds: [],
              tokenIds: [],
              logprobs: [],
              finishReason: 'stop' as const,
            })),
          ),
        ),
    };
    const seats: SeatBinding[] = [
      { name: 'solver', role, policy, sampling: { temperature: 0, topP: 1, topK: 0, maxTokens: 4 } },
    ];
    const reward = { id: 'zero', terms: () => ({ team: 0, local: 0 }) };
    const keyOf = instanceKeyAt(environment, 'test', 5);
    assert.ok(new Set(rawKeys(5, keyOf)).size < 5, 'the first 5 test indices repeat an instance');
    const ev = await evaluateTeam({ environment, seats, reward }, { split: 'test', episodes: 5, seed: 5 });
    assert.equal(ev.episodes, 5);
    assert.deepEqual(ev.instanceKeys, distinctIndices(keyOf, 5).map(keyOf));
    assert.equal(new Set(ev.instanceKeys).size, 5);
    assert.deepEqual(
      ev.outcomes,
      ev.instanceKeys.map((k) => Number(k.slice(2)) % 2 === 0),
    );
  });
});
