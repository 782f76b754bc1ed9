import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SPLITS, TraceWriter, type Split } from '@troupe/kernel';
import { integer, positiveInt, printJson, UsageError, CliError } from '../errors.js';
import { loadSpecOrDefault } from './train.js';

interface EvalOptions {
  checkpoint?: string;
  split: string;
  episodes?: number;
  seed?: number;
  decoding: string;
  concurrency: number;
  json?: boolean;
  trace?: string;
}

/** A checkpoint folder: `.../checkpoints/step-N`, or a run folder (its newest checkpoint). */
async function resolveCheckpoint(dir: string): Promise<string> {
  const abs = resolve(dir);
  if (!existsSync(abs)) throw new UsageError(`--checkpoint ${dir}: no such folder`);
  if (existsSync(join(abs, 'trainer-state.json'))) return abs;
  const { listCheckpoints } = await import('@troupe/kernel/model');
  const steps = await listCheckpoints(abs);
  if (steps.length === 0) throw new CliError(`--checkpoint ${dir}: neither a step checkpoint (no trainer-state.json) nor a run folder with checkpoints/step-N`);
  return join(abs, 'checkpoints', `step-${steps.at(-1)}`);
}

/**
 * `troupe eval SPEC`: independent rollouts (K = 1) with fixed decoding on a held-out split; success rate with a 95%
 * Wilson interval and per-seat rewards. `--checkpoint` loads trained weights (a step folder or a run folder).
 */
export function register(program: Command): void {
  program
    .command('eval')
    .description('evaluate a team: independent K = 1 rollouts, fixed decoding, success rate with a 95% Wilson interval')
    .argument('[spec]', 'team spec file (YAML); default: the embedded default team')
    .option('--checkpoint <dir>', 'load trained weights: a checkpoints/step-N folder, or a run folder (its newest checkpoint)')
    .option('--split <split>', `split: ${SPLITS.join(', ')}`, 'test')
    .option('-n, --episodes <n>', 'episodes (default: the spec\'s evaluation.episodes)', positiveInt('--episodes'))
    .option('--seed <n>', 'seed of the instances (default: the spec\'s)', integer('--seed'))
    .option('--decoding <mode>', 'greedy (temperature 0) or spec (each seat\'s sampling)', 'greedy')
    .option('--concurrency <n>', 'episodes at once', positiveInt('--concurrency'), 4)
    .option('--trace <file>', 'write the episodes as a JSONL trace, one record per agent turn (prompt, completion, action, reward)')
    .option('--json', 'print one JSON document')
    .action(async (file: string | undefined, opts: EvalOptions) => {
      if (!(SPLITS as readonly string[]).includes(opts.split)) throw new UsageError(`--split must be one of ${SPLITS.join(', ')}, got "${opts.split}"`);
      if (opts.decoding !== 'greedy' && opts.decoding !== 'spec') throw new UsageError(`--decoding must be greedy or spec, got "${opts.decoding}"`);
      const spec = loadSpecOrDefault(file);
      const { composeTrainableTeam, evaluateTeam, policyHandles, resolveTrainerConfig, restoreWeights } = await import('@troupe/kernel/model');
      const config = resolveTrainerConfig(spec);
      const checkpoint = opts.checkpoint ? await resolveCheckpoint(opts.checkpoint) : undefined;
      const team = await composeTrainableTeam(spec);
      let trace: TraceWriter | undefined;
      try {
        if (checkpoint) await restoreWeights(checkpoint, policyHandles(spec, team.policies, team.seats.map((s) => s.name), config));
        const episodes = opts.episodes ?? spec.evaluation.episodes;
        const seed = opts.seed ?? spec.seed;
        trace = opts.trace ? new TraceWriter(opts.trace) : undefined;
        const writer = trace;
        const r = await evaluateTeam(team, {
          split: opts.split as Split, episodes, seed, concurrency: opts.concurrency, decoding: opts.decoding as 'greedy' | 'spec', grammar: config.constrainedDecoding,
          ...(writer ? { onEvent: (e) => writer.next(e) } : {}),
        });
        await trace?.close();
        const report = {
          spec: spec.file, checkpoint: checkpoint ?? null, environment: team.environment.id, split: r.split, seed, decoding: opts.decoding,
          episodes: r.episodes, successes: r.successes, success_rate: r.successRate, ci95: r.ci95,
          mean_reward: r.meanReward, parse_failure_rate: r.parseFailureRate, mean_turns: r.meanTurns, seconds: r.seconds,
          ...(trace ? { trace: opts.trace, trace_records: trace.records } : {}),
        };
        if (opts.json) printJson(report);
        else {
          const out = process.stdout;
          out.write(`${spec.name}${checkpoint ? ` @ ${checkpoint}` : ''}: ${r.episodes} episodes of ${team.environment.id} (${r.split} split, ${opts.decoding} decoding, K = 1)\n`);
          out.write(`  success rate      ${r.successRate.toFixed(3)}  (95% Wilson CI ${r.ci95[0].toFixed(3)}–${r.ci95[1].toFixed(3)})\n`);
          for (const [seat, v] of Object.entries(r.meanReward)) out.write(`  ${`reward/${seat}`.padEnd(18)}${v.toFixed(4)}  (parse failures ${((r.parseFailureRate[seat] ?? 0) * 100).toFixed(1)}%)\n`);
          if (trace) out.write(`  trace             ${opts.trace} (${trace.records} records)\n`);
        }
      } finally {
        await trace?.close().catch(() => undefined);
        await team.dispose();
      }
    });
}
