/**
 * Instance addressing across environments: instance N of every environment is searched on its own, so a fresh process
 * (a worker of the distributed engine told "play instance N of split S") gives the very instance that a process walking
 * 0 … N reaches; and where a tiny config repeats instances, the trainer's walk over distinct instances skips the
 * repeats.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SPLITS, canonicalJson, type Split } from '@troupe/kernel';
import { SokobanEnvironment } from '@troupe/env-sokoban';
import { DistinctIndices, InstanceSchedule, distinctIndices, instanceKeyAt } from '@troupe/trainer';
import { ENVIRONMENTS } from './helpers/fresh-instance.js';

/** The index a fresh process is asked for, and the seed. */
const [N, SEED] = [120, 4];

describe('instance addressing', () => {
  it(`instance ${N} in a fresh process equals instance ${N} reached after 0 … ${N - 1}, for every environment and split`, () => {
    const helper = fileURLToPath(new URL('./helpers/fresh-instance.ts', import.meta.url));
    const fresh = JSON.parse(
      execFileSync(
        process.execPath,
        ['--conditions=troupe:source', '--import', 'tsx', helper, String(N), String(SEED)],
        {
          encoding: 'utf8',
          maxBuffer: 16 << 20,
        },
      ),
    ) as Record<string, Record<Split, string>>;
    for (const [name, make] of Object.entries(ENVIRONMENTS)) {
      const env = make();
      for (const split of SPLITS) {
        for (let i = 0; i < N; i++) env.instance(split, i, SEED);
        assert.equal(canonicalJson(env.instance(split, N, SEED)), fresh[name]![split], `${name} ${split} ${N}`);
      }
    }
  });

  it('a tiny Sokoban config repeats instances; the distinct walk skips the repeats, also after a resume', () => {
    const env = new SokobanEnvironment({ size: 5 });
    const keyOf = instanceKeyAt(env, 'test', 0);
    const raw = Array.from({ length: 12 }, (_, i) => keyOf(i));
    assert.ok(new Set(raw).size < raw.length, `5x5 test instances repeat within 12 indices (${new Set(raw).size})`);
    const indices = distinctIndices(keyOf, 8);
    assert.equal(new Set(indices.map(keyOf)).size, 8);
    assert.ok(indices.at(-1)! > 7, 'some index was skipped');
    // the train schedule: distinct fresh instances, the same ones after a resume from its state
    const train = instanceKeyAt(env, 'train', 0);
    const schedule = new InstanceSchedule({ fraction: 0, maxReplays: 0 }, undefined, train);
    const first = schedule.next(4);
    const resumed = new InstanceSchedule({ fraction: 0, maxReplays: 0 }, schedule.state(), train);
    const second = schedule.next(8);
    assert.deepEqual(resumed.next(8), second);
    const played = [...first, ...second].map((x) => train(x.index));
    assert.equal(new Set(played).size, played.length, 'no train instance played twice');
    const walk = new DistinctIndices(train);
    assert.deepEqual(
      [...first, ...second].map((x) => x.index),
      Array.from({ length: 12 }, () => walk.take()),
    );
  });
});
