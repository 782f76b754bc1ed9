import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeTeam, resolveTrainerConfig, type EpisodeEvent } from '@troupe/kernel';
import { evaluateTeam, policyHandles, Trainer } from '../src/index.js';
import { PlayProcesses } from '../src/play-processes.js';
import { treeSeats } from '../src/rollouts.js';
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

describe('episodes over play processes', function () {
  this.timeout(120_000);

  it('plays the same episodes as the in-process evaluation, with the trainer’s weights', async () => {
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
      const setup = { ...team, treeSeats: treeSeats(team.seats, config), seed: spec.seed, config };
      const engine = new PlayProcesses({ spec, config, team, handles }, setup, 2);
      await engine.ready(); // so that the worker plays some of the 8 episodes
      const threaded: EpisodeEvent[] = [];
      const two = await evaluateTeam(team, { ...options, engine, onEvent: (e) => threaded.push(e) });
      await engine.close();
      assert.deepEqual(engine.workerErrors, []);
      assert.ok(engine.workerItems > 0 && engine.workerItems < 8, `the worker played ${engine.workerItems} of 8`);
      assert.notDeepEqual(perEpisode(local), perEpisode(before), 'the changed weights change the episodes');
      assert.deepEqual(perEpisode(threaded), perEpisode(local));
      const { seconds: _a, ...a } = one;
      const { seconds: _b, ...b } = two;
      assert.deepEqual(b, a);
    } finally {
      await team.dispose();
    }
  });

  it('a training run gives the same trace, weights and evaluations with one process and with two', async () => {
    const run = async (workers: number): Promise<{ evals: unknown[]; trace: string; weights: Buffer[] }> => {
      const out = mkdtempSync(join(tmpdir(), 'troupe-play-processes-'));
      const spec = await microTeamSpec({
        mapping: 'per-role',
        algorithm: {
          steps: 2,
          batchSize: 3,
          concurrency: 4,
          workers,
          warmStart: { demonstrations: 4, epochs: 1, lr: 1e-2, miniBatchSize: 2 },
        },
      });
      const t = await Trainer.create(spec, { outDir: out });
      let workerItems: number;
      try {
        await t.run();
        workerItems = (t as unknown as { players: PlayProcesses | null }).players?.workerItems ?? 0;
      } finally {
        await t.dispose();
      }
      assert.equal(workerItems > 0, workers > 1, `${workers} workers: the worker played ${workerItems} items`);
      const evals = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((r) => r.kind === 'baseline' || r.kind === 'final')
        .map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith('time/'))));
      const weights = ['proposer', 'executor'].map((p) =>
        readFileSync(join(out, 'checkpoints', 'step-2', p, 'model.safetensors')),
      );
      return { evals, trace: readFileSync(join(out, 'trace.jsonl'), 'utf8'), weights };
    };
    const one = await run(1);
    assert.equal(one.evals.length, 2, JSON.stringify(one.evals));
    assert.ok(one.trace.split('\n').length > 10, 'the steps were traced');
    const two = await run(2);
    assert.deepEqual(two.evals, one.evals);
    assert.equal(two.trace, one.trace);
    assert.ok(
      two.weights.every((w, i) => w.equals(one.weights[i]!)),
      'the same weights after two steps',
    );
  });
});
