/**
 * The evaluation over play processes (packages/trainer/src/play-processes.ts) against the in-process one on the default team: the
 * same episodes (outcomes and every event compared), and the wall time of each.
 *
 * Run: npx tsx --conditions=troupe:source bench/play-processes.ts [episodes=32] [checkpoint=<a run>/checkpoints/step-N]
 * (without a checkpoint the models are untrained: every program runs to maxTokens, the slowest case)
 */
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { composeTeam, loadTeamSpec, resolveTrainerConfig, type TeamSpec } from '@troupe/kernel';
import { DEFAULT_TEAM_SPEC_FILE, evaluateTeam, policyHandles } from '@troupe/trainer';
import { PlayProcesses } from '../packages/trainer/src/play-processes.js';
import { treeSeats } from '../packages/trainer/src/rollouts.js';

const EPISODES = Number(process.argv[2] ?? 32);
const CHECKPOINT = process.argv[3];
const base = loadTeamSpec(DEFAULT_TEAM_SPEC_FILE);
const spec: TeamSpec = CHECKPOINT
  ? {
      ...base,
      policies: Object.fromEntries(
        Object.entries(base.policies).map(([name, p]) => [name, { kind: p.kind, model: join(CHECKPOINT, name) }]),
      ) as TeamSpec['policies'],
    }
  : base;
const config = resolveTrainerConfig(spec);
const team = await composeTeam(spec);
const handles = policyHandles(
  spec,
  team.policies,
  team.seats.map((s) => s.name),
  config,
);
const options = { split: 'test' as const, episodes: EPISODES, seed: spec.seed, grammar: config.constrainedDecoding };
console.log(
  `load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}, ${availableParallelism()} cores, ${EPISODES} episodes, concurrency ${config.concurrency}`,
);
const events: Record<string, unknown[]> = { local: [], threads: [] };
const one = await evaluateTeam(team, {
  ...options,
  concurrency: config.concurrency,
  onEvent: (e) => events.local!.push(e),
});
console.log(`in-process: ${one.seconds.toFixed(1)} s, success ${one.successRate.toFixed(3)}`);
const setup = { ...team, treeSeats: treeSeats(team.seats, config), seed: spec.seed, config };
const threaded = new PlayProcesses({ spec, config, team, handles }, setup, 2);
const two = await evaluateTeam(team, { ...options, engine: threaded, onEvent: (e) => events.threads!.push(e) });
console.log(
  `2 processes: ${two.seconds.toFixed(1)} s, success ${two.successRate.toFixed(3)}${threaded.workerErrors.length ? ` worker errors: ${threaded.workerErrors.join('; ')}` : ''}`,
);
const key = (e: unknown): string => JSON.stringify(e);
const byEpisode = (list: unknown[]): string[] => list.map(key).sort();
const same = JSON.stringify(one.outcomes) === JSON.stringify(two.outcomes);
console.log(
  'mean rewards',
  JSON.stringify(one.meanReward),
  JSON.stringify(two.meanReward),
  one.meanTurns,
  two.meanTurns,
);
const sameEvents = JSON.stringify(byEpisode(events.local!)) === JSON.stringify(byEpisode(events.threads!));
console.log(
  `same outcomes: ${same}; same events: ${sameEvents} (${events.local!.length} events); speed-up ${(one.seconds / two.seconds).toFixed(2)}x; load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
await threaded.close();
await team.dispose?.();
