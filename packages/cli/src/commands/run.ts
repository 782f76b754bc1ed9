import type { Command } from 'commander';
import { tmpdir } from 'node:os';
import { from, lastValueFrom, mergeMap, tap, type Observable } from 'rxjs';
import {
  composeTeam,
  createHostFor,
  loadTeamSpec,
  planEpisodes,
  resolveExecution,
  resolveTrainerConfig,
  runEpisodes,
  SPLITS,
  SummaryAggregator,
  teamNumberRange,
  TraceWriter,
  type EpisodeEvent,
  type Split,
  type TeamRuntime,
  type TeamSpec,
} from '@troupe/kernel';
import { positiveInt, integer, printJson, UsageError } from '../errors.js';
import { importOptional } from '../optional.js';
import { EpisodeProgress } from '../progress.js';
import { checkExecution } from './train.js';

interface RunOptions {
  episodes: number;
  policy?: string;
  split?: string;
  json?: boolean;
  trace?: string;
  concurrency: number;
  seed?: number;
  progress: boolean;
  redis?: string;
}

/**
 * Plays the episodes as jobs of the distributed engine (`--redis`, or the spec's `execution`), one per episode, on
 * `troupe worker` processes; feeds each episode's events, in episode order, to `onEvent`. Returns how many episodes'
 * jobs failed (after their attempts), each told on stderr.
 */
async function playOnWorkers(
  spec: TeamSpec,
  team: TeamRuntime,
  execution: ReturnType<typeof resolveExecution>,
  count: number,
  options: { split: Split; seed: number },
  onEvent: (e: EpisodeEvent) => void,
): Promise<number> {
  const { policyHandles, startDistributedRollouts } = await importOptional(
    '@troupe/trainer',
    'troupe run --redis',
    () => import('@troupe/trainer'),
  );
  const config = resolveTrainerConfig(spec);
  const handles = policyHandles(
    spec,
    team.policies,
    team.seats.map((s) => s.name),
    config,
  );
  const engine = await startDistributedRollouts(spec, config, handles, execution, {
    runDir: tmpdir(),
    onNoWorkers: (message) => process.stderr.write(`\n${message}\n`),
  });
  try {
    const results = await engine.playRun(
      Array.from({ length: count }, (_, i) => i),
      options,
    );
    let failed = 0;
    results.forEach((r, i) => {
      if (!Array.isArray(r)) {
        failed++;
        process.stderr.write(`episode ${i} (${options.split} instance ${i}) failed on the workers: ${r.error}\n`);
      } else for (const e of r) onEvent(e);
    });
    return failed;
  } finally {
    await engine.close();
  }
}

/** `troupe run SPEC`: plays episodes of a team through the turn streams and reports success and reward per seat. */
export function register(program: Command): void {
  program
    .command('run')
    .description('play episodes of a team (no training) and report success rate and mean reward per seat')
    .argument('<spec>', 'team spec file (YAML)')
    .option(
      '-n, --episodes <n>',
      'number of episodes',
      positiveInt('--episodes', teamNumberRange('evaluation.episodes').maximum),
      100,
    )
    .option('--policy <kind>', "play every seat with this policy kind instead of the spec's (e.g. oracle, random)")
    .option('--split <split>', `instance split: ${SPLITS.join(', ')} (default: the spec's evaluation split)`)
    .option('--seed <n>', "seed (default: the spec's)", integer('--seed', teamNumberRange('seed')))
    .option(
      '--concurrency <n>',
      'episodes played at once',
      positiveInt('--concurrency', teamNumberRange('algorithm.concurrency').maximum),
      8,
    )
    .option('--trace <file>', 'write a JSONL trace, one record per agent turn')
    .option(
      '--redis <url>',
      "play the episodes as jobs on this Redis, one per episode, with `troupe worker` processes (overrides the spec's execution; docs/scale-out.md)",
    )
    .option('--json', 'print one JSON document')
    .option('--no-progress', 'no progress display on stderr')
    .action(async (file: string, opts: RunOptions) => {
      if (opts.split !== undefined && !(SPLITS as readonly string[]).includes(opts.split)) {
        throw new UsageError(`--split must be one of ${SPLITS.join(', ')}, got "${opts.split}"`);
      }
      const spec = loadTeamSpec(file);
      if (opts.policy !== undefined && resolveExecution(spec, opts).engine === 'bullmq')
        throw new UsageError(
          "--policy cannot be combined with a distributed run (--redis or execution.redis): the workers play the spec's policies; write the policy into the spec instead",
        );
      const execution = resolveExecution(spec, await checkExecution(spec, opts));
      const host = createHostFor(spec.file);
      if (opts.policy !== undefined) {
        // The flag's own problem is the flag's, not the spec's: say so before the spec is checked with it.
        await host.ensure('policies', opts.policy).catch((error: unknown) => {
          throw new UsageError(
            `--policy ${opts.policy}: ${error instanceof Error ? error.message.replace(/^plugin \S+: /, '') : String(error)}`,
          );
        });
      }
      const team = await composeTeam(spec, {
        host,
        ...(opts.policy !== undefined ? { policyOverride: opts.policy } : {}),
      });
      try {
        const split = (opts.split ?? spec.evaluation.split) as Split;
        const seed = opts.seed ?? spec.seed;
        const contexts = planEpisodes({
          environment: team.environment,
          split,
          count: opts.episodes,
          seed,
          seats: team.seats,
          reward: team.reward,
        });
        const summary = new SummaryAggregator();
        const progress = new EpisodeProgress(opts.episodes, {
          enabled: opts.progress && !opts.json,
          label: 'episodes',
        });
        const trace = opts.trace ? new TraceWriter(opts.trace) : undefined;
        const started = Date.now();
        let failedEpisodes = 0;
        if (execution.engine === 'bullmq') {
          failedEpisodes = await playOnWorkers(spec, team, execution, opts.episodes, { split, seed }, (e) => {
            summary.next(e);
            progress.next(e);
            trace?.next(e);
          });
        } else {
          // lockstep batching per episode (execution.batching: instance, as workers play it) or across all of them
          const played: Observable<EpisodeEvent> =
            execution.batching === 'step'
              ? runEpisodes(contexts, { concurrency: opts.concurrency, lockstep: true })
              : from(contexts).pipe(
                  mergeMap((c) => runEpisodes([c], { concurrency: 1, lockstep: true }), opts.concurrency),
                );
          const events = played.pipe(tap(summary), tap(progress));
          await lastValueFrom(trace ? events.pipe(tap(trace)) : events, { defaultValue: undefined });
        }
        await trace?.close();
        progress.complete();
        const result = summary.result();
        const report = {
          spec: spec.file,
          environment: team.environment.id,
          split,
          seed,
          policies: Object.fromEntries([...team.policies].map(([name, p]) => [name, p.kind])),
          episodes: result.episodes,
          success_rate: result.successRate,
          mean_turns: result.meanTurns,
          truncated_rate: result.truncatedRate,
          mean_reward: result.meanReward,
          mean_sample_reward: result.meanSampleReward,
          parse_failure_rate: result.parseFailureRate,
          samples: result.samples,
          ...(execution.engine === 'bullmq' ? { failed_episodes: failedEpisodes } : {}),
          seconds: (Date.now() - started) / 1000,
          ...(trace ? { trace: opts.trace, trace_records: trace.records } : {}),
        };
        if (opts.json) printJson(report);
        else {
          const out = process.stdout;
          out.write(
            `${spec.name}: ${report.episodes} episodes of ${report.environment} (${split} split, seed ${seed})\n`,
          );
          out.write(`  success rate      ${report.success_rate.toFixed(3)}\n`);
          out.write(`  mean turns        ${report.mean_turns.toFixed(2)}\n`);
          for (const [seat, r] of Object.entries(report.mean_reward)) {
            out.write(
              `  ${`reward/${seat}`.padEnd(18)}${r.toFixed(4)}  (parse failures ${((report.parse_failure_rate[seat] ?? 0) * 100).toFixed(1)}%)\n`,
            );
          }
          if (trace) out.write(`  trace             ${opts.trace} (${trace.records} records)\n`);
        }
      } finally {
        await team.dispose();
      }
    });
}
