import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeTeam, resolveTrainerConfig, type EpisodeEvent } from '@troupe/kernel';
import { evaluateTeam, policyHandles, Trainer } from '../src/index.js';
import { ThreadedEval } from '../src/eval-thread.js';
import { microTeamSpec } from './trainer-helpers.js';

/** The events of each episode, in instance order (the order within an episode is the loop's own). */
function perEpisode(events: readonly EpisodeEvent[]): string[] {
  const by = new Map<string, string[]>();
  for (const e of events) {
    const id = (e as { episodeId: string }).episodeId;
    by.set(id, [...(by.get(id) ?? []), JSON.stringify(e)]);
  }
  return [...by].sort(([a], [b]) => a.localeCompare(b)).map(([id, list]) => `${id}: ${list.join('\n')}`);
}

describe('evaluation over worker threads', function () {
  this.timeout(120_000);

  it('plays the same episodes as the in-process evaluation, with the main thread’s weights', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role', maxTokens: 12, algorithm: { concurrency: 4 } });
    const config = resolveTrainerConfig(spec);
    const team = await composeTeam(spec);
    try {
      const handles = policyHandles(
        spec,
        team.policies,
        team.seats.map((s) => s.name),
        config,
      );
      const options = { split: 'test' as const, episodes: 8, seed: 5, grammar: true };
      const before: EpisodeEvent[] = [];
      await evaluateTeam(team, { ...options, concurrency: 4, onEvent: (e) => before.push(e) });
      // weights the spec does not have: the workers must play with these
      for (const h of handles) {
        const m = h.trainable!.model;
        m.assignTensors(
          new Map(
            [...m.exportTensors()].map(([name, t]) => [
              name,
              { ...t, data: t.data.map((x, i) => x + 0.05 * Math.sin(i * 12.9898 + name.length)) },
            ]),
          ),
        );
      }
      const local: EpisodeEvent[] = [];
      const one = await evaluateTeam(team, { ...options, concurrency: 4, onEvent: (e) => local.push(e) });
      const engine = new ThreadedEval({ spec, config, team, handles }, 4, 2);
      const threaded: EpisodeEvent[] = [];
      const two = await evaluateTeam(team, { ...options, engine, onEvent: (e) => threaded.push(e) });
      assert.deepEqual(engine.workerErrors, []);
      assert.notDeepEqual(perEpisode(local), perEpisode(before), 'the changed weights change the episodes');
      assert.deepEqual(perEpisode(threaded), perEpisode(local));
      const { seconds: _a, ...a } = one;
      const { seconds: _b, ...b } = two;
      assert.deepEqual(b, a);
    } finally {
      await team.dispose();
    }
  });

  it('a training run evaluates the same with one thread and with two', async () => {
    const run = async (workers: number): Promise<unknown[]> => {
      const out = mkdtempSync(join(tmpdir(), 'troupe-eval-threads-'));
      const spec = await microTeamSpec({
        mapping: 'per-role',
        algorithm: {
          steps: 1,
          concurrency: 4,
          workers,
          warmStart: { demonstrations: 4, epochs: 1, lr: 1e-2, miniBatchSize: 2 },
        },
      });
      const t = await Trainer.create(spec, { outDir: out });
      try {
        await t.run();
      } finally {
        await t.dispose();
      }
      return readFileSync(join(out, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((r) => r.kind === 'baseline' || r.kind === 'final')
        .map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith('time/'))));
    };
    const one = await run(1);
    assert.equal(one.length, 2, JSON.stringify(one));
    assert.deepEqual(await run(2), one);
  });
});
