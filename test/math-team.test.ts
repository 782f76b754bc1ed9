/**
 * The math environment with its roles, end to end through the kernel (team spec → plugins → turn streams → sandbox):
 * examples/math.yaml (coder + solver) and examples/math-single.yaml (solver only) played by the scripted oracle and
 * random policies, with the rewards the env-math README documents.
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

describe('math team end to end (examples, kernel, roles, sandbox)', () => {
  it('examples/math.yaml: the oracle coder (its program runs in the sandbox) and solver agree on the right answer in turn 1', async () => {
    const { summary, events } = await play(example('math.yaml'), 3);
    assert.equal(summary.episodes, 3);
    assert.equal(summary.successRate, 1);
    assert.equal(summary.meanTurns, 1);
    // coder: team (previous solver answer: none → 0) + coder_reward 1; solver: team 1 + solver_correct 1
    assert.deepEqual(summary.meanReward, { coder: 1, solver: 2 });
    assert.deepEqual(summary.parseFailureRate, { coder: 0, solver: 0 });
    const sample = events.find((e) => e.type === 'step' && e['seat'] === 'solver');
    assert.match(JSON.stringify(sample), /\\\\boxed\{/);
  });

  it('examples/math.yaml with random policies: random small integers rarely solve generated problems; every episode ends by T', async () => {
    const { summary } = await play(example('math.yaml'), 3, 'random');
    assert.equal(summary.episodes, 3);
    assert.ok(summary.meanTurns <= 3);
    assert.ok(summary.successRate < 1);
  });

  it('examples/math-single.yaml: the single-agent baseline is one solver answer', async () => {
    const { summary } = await play(example('math-single.yaml'), 3);
    assert.equal(summary.successRate, 1);
    assert.equal(summary.meanTurns, 1);
    assert.deepEqual(summary.meanReward, { solver: 2 });
  });
});
