/**
 * The code environment with its roles, end to end through the kernel (team spec → plugins → turn streams → sandbox):
 * the shipped examples played by the scripted oracle and random policies, and the coder as the proposer of the games
 * (Plan-Path, Sokoban, Sudoku: the paper's tool agent) whose program runs in the sandbox.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, tap } from 'rxjs';
import {
  composeTeam,
  loadTeamSpec,
  planEpisodes,
  runEpisodes,
  SummaryAggregator,
  type RolloutSummary,
} from '@troupe/kernel';
import { collectDemonstrations } from '@troupe/trainer';

const example = (name: string): string => fileURLToPath(new URL(`../examples/${name}`, import.meta.url));

async function play(
  file: string,
  episodes: number,
  policy?: string,
): Promise<{ summary: RolloutSummary; events: { type: string; [k: string]: unknown }[] }> {
  const spec = loadTeamSpec(file);
  const team = await composeTeam(spec, policy ? { policyOverride: policy } : {});
  try {
    const contexts = planEpisodes({
      environment: team.environment,
      split: spec.evaluation.split,
      count: episodes,
      seed: spec.seed,
      seats: team.seats,
      reward: team.reward,
    });
    const summary = new SummaryAggregator();
    const events: { type: string; [k: string]: unknown }[] = [];
    await lastValueFrom(
      runEpisodes(contexts, { concurrency: 2 }).pipe(
        tap(summary),
        tap((e) => events.push(e as never)),
      ),
      { defaultValue: undefined },
    );
    return { summary: summary.result(), events };
  } finally {
    await team.dispose();
  }
}

describe('code team end to end (examples, kernel, roles, sandbox)', () => {
  it('examples/code.yaml: the oracle coder and tester solve every test-split problem in one turn', async () => {
    const { summary } = await play(example('code.yaml'), 3);
    assert.equal(summary.episodes, 3);
    assert.equal(summary.successRate, 1);
    assert.equal(summary.meanTurns, 1);
    // coder: team 1 + local (golden pass rate) 1; tester: team 1 + local (reference pass rate) 1
    assert.deepEqual(summary.meanReward, { coder: 2, tester: 2 });
    assert.deepEqual(summary.parseFailureRate, { coder: 0, tester: 0 });
  });

  it('examples/code.yaml with random policies: trivial programs and random tests fail, every episode ends by T', async () => {
    const { summary } = await play(example('code.yaml'), 2, 'random');
    assert.equal(summary.episodes, 2);
    assert.equal(summary.successRate, 0);
    assert.ok(summary.meanTurns <= 3);
    assert.ok((summary.meanReward['tester'] ?? 1) < 1);
  });

  it('examples/code-single.yaml: the single-agent baseline is one shot', async () => {
    const { summary } = await play(example('code-single.yaml'), 2);
    assert.equal(summary.successRate, 1);
    assert.deepEqual(Object.keys(summary.meanReward), ['coder']);
  });

  // The coder as the games' proposer: the oracle plays the environment's search program, which the sandbox runs.
  const CODER_GAMES = [
    {
      file: 'plan-path-coder.yaml',
      actionType: 'moves',
      program: /^```python\nfrom heapq import\*\ng="""/,
      search: /heappop/,
    },
    { file: 'sokoban-coder.yaml', actionType: 'moves', program: /^```python\ng="""#+\n/, search: /for p,b,m in q:/ },
    {
      file: 'sudoku-coder.yaml',
      actionType: 'sudoku-fills',
      program: /^```python\ng=\[\[int\(c\)for c in r\]for r in"""/,
      search: /def s\(k\):/,
    },
  ] as const;

  for (const game of CODER_GAMES) {
    it(`examples/${game.file}: the coder proposes by running a program; its details reach the trace`, async () => {
      const { summary, events } = await play(example(game.file), 2);
      assert.equal(summary.successRate, 1);
      assert.equal(summary.parseFailureRate['proposer'], 0);
      const sample = events.find((e) => e.type === 'step' && e['seat'] === 'proposer') as
        Record<string, unknown> | undefined;
      assert.ok(sample, 'a proposer step record');
      // The oracle proposer writes the environment's search program (the state as data), not a printed answer.
      assert.match(JSON.stringify(sample), game.search);
    });

    it(`examples/${game.file}: warm-start demonstrations of the coder are the environment's search program; run, it prints the oracle's action`, async function () {
      this.timeout(120_000);
      const team = await composeTeam(loadTeamSpec(example(game.file)));
      try {
        const env = team.environment;
        const demos = (await collectDemonstrations(env, team.seats, { count: 12, seed: 4 })).filter(
          (d) => d.seat === 'proposer',
        );
        assert.equal(demos.length, 12);
        const coder = team.seats.find((s) => s.name === 'proposer')!.role;
        for (const d of demos) {
          assert.match(d.text, game.program);
          const move = await coder.parse(d.text, { seat: 'proposer', actionType: game.actionType });
          assert.equal(move.kind, 'action', d.text);
          assert.deepEqual(
            (move as { action: unknown }).action,
            env.oracle!(env.reset(env.instance('train', d.index, 4)), 'proposer'),
          );
        }
      } finally {
        await team.dispose();
      }
    });
  }
});
