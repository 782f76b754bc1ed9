import type { Command } from 'commander';
import { lastValueFrom, tap } from 'rxjs';
import {
  composeTeam,
  createHostFor,
  loadTeamSpec,
  planEpisodes,
  runEpisodes,
  SPLITS,
  SummaryAggregator,
  teamNumberRange,
  TraceWriter,
  type Split,
} from '@troupe/kernel';
import { positiveInt, integer, printJson, UsageError } from '../errors.js';
import { EpisodeProgress } from '../progress.js';

interface RunOptions {
  episodes: number;
  policy?: string;
  split?: string;
  json?: boolean;
  trace?: string;
  concurrency: number;
  seed?: number;
  progress: boolean;
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
    .option('--json', 'print one JSON document')
    .option('--no-progress', 'no progress display on stderr')
    .action(async (file: string, opts: RunOptions) => {
      if (opts.split !== undefined && !(SPLITS as readonly string[]).includes(opts.split)) {
        throw new UsageError(`--split must be one of ${SPLITS.join(', ')}, got "${opts.split}"`);
      }
      const spec = loadTeamSpec(file);
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
        const events = runEpisodes(contexts, { concurrency: opts.concurrency, lockstep: true }).pipe(
          tap(summary),
          tap(progress),
        );
        await lastValueFrom(trace ? events.pipe(tap(trace)) : events, { defaultValue: undefined });
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
