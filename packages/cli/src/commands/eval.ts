import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import {
  composeTeam,
  loadTeamSpec,
  resolveExecution,
  resolveTrainerConfig,
  SPLITS,
  teamNumberRange,
  TraceWriter,
  type Split,
  type TeamSpec,
} from '@troupe/kernel';
import type { EvaluateOptions, EvaluationResult } from '@troupe/trainer';
import { integer, positiveInt, printJson, UsageError, CliError } from '../errors.js';
import { checkExecution, loadSpecOrDefault } from './train.js';
import { importOptional } from '../optional.js';

interface EvalOptions {
  checkpoint?: string;
  split: string;
  episodes?: number;
  seed?: number;
  decoding: string;
  concurrency: number;
  json?: boolean;
  trace?: string;
  baseline?: string;
  redis?: string;
}

/**
 * A checkpoint folder: `.../checkpoints/step-N`, a run folder (its newest checkpoint), or a run's
 * `checkpoints/best.json` (`algorithm.keepBest`: the checkpoint it names).
 */
async function resolveCheckpoint(dir: string, flag = '--checkpoint'): Promise<string> {
  const abs = resolve(dir);
  if (!existsSync(abs)) throw new UsageError(`${flag} ${dir}: no such file or folder`);
  const { BEST_FILE, listCheckpoints, readBestFile } = await importOptional(
    '@troupe/trainer',
    'troupe eval',
    () => import('@troupe/trainer'),
  );
  if (basename(abs) === BEST_FILE) return readBestFile(abs);
  if (existsSync(join(abs, 'trainer-state.json'))) return abs;
  const steps = await listCheckpoints(abs);
  if (steps.length === 0)
    throw new CliError(
      `${flag} ${dir}: neither a step checkpoint (no trainer-state.json) nor a run folder with checkpoints/step-N`,
    );
  return join(abs, 'checkpoints', `step-${steps.at(-1)}`);
}

/**
 * The team spec to evaluate: SPEC when given (a note on stderr when the checkpoint's run had another name), else the
 * spec file the checkpoint's run was trained from (recorded in its trainer-state.json), else the embedded default
 * team — but never the default for a run of another team (its weights would load and be played in the wrong game).
 */
async function evaluationSpec(
  file: string | undefined,
  checkpoint: string | undefined,
  flag: string | undefined,
): Promise<TeamSpec> {
  const { readTrainerState } = await importOptional('@troupe/trainer', 'troupe eval', () => import('@troupe/trainer'));
  const run = checkpoint ? (await readTrainerState(checkpoint)).run : undefined;
  if (file !== undefined || !run) {
    const spec = loadSpecOrDefault(file);
    if (run && run.name !== spec.name) {
      process.stderr.write(
        `note: --checkpoint ${flag} was written by a run of '${run.name}'${run.spec ? ` (${run.spec})` : ''}; evaluating it with the spec '${spec.name}' (${spec.file})\n`,
      );
    }
    return spec;
  }
  if (run.spec !== undefined) {
    if (!existsSync(run.spec)) {
      throw new CliError(
        `--checkpoint ${flag}: its run was trained from ${run.spec}, which no longer exists; pass the team spec to evaluate it with: troupe eval SPEC --checkpoint ${flag}`,
      );
    }
    return loadTeamSpec(run.spec);
  }
  const spec = loadSpecOrDefault(undefined);
  if (run.name !== spec.name) {
    throw new CliError(
      `--checkpoint ${flag}: it was written by a run of '${run.name}' (seed ${run.seed}), not of the default team, and does not record its spec file; pass that spec: troupe eval SPEC --checkpoint ${flag}`,
    );
  }
  return spec;
}

/** An evaluation's figures as `--json` reports them (for the checkpoint and for the `--baseline`). */
function summary(r: EvaluationResult) {
  return {
    successes: r.successes,
    success_rate: r.successRate,
    ci95: r.ci95,
    mean_reward: r.meanReward,
    parse_failure_rate: r.parseFailureRate,
    mean_turns: r.meanTurns,
    seconds: r.seconds,
  };
}

/** `0.287  (95% Wilson CI 0.238–0.340)`. */
function rateWithCi(r: EvaluationResult): string {
  return `${r.successRate.toFixed(3)}  (95% Wilson CI ${r.ci95[0].toFixed(3)}–${r.ci95[1].toFixed(3)})`;
}

/**
 * `troupe eval SPEC`: independent rollouts (K = 1) with fixed decoding on a held-out split; success rate with a 95%
 * Wilson interval and per-seat rewards. `--checkpoint` loads trained weights (a step folder or a run folder);
 * `--baseline` plays the same episodes with other weights first and compares the two episode by episode.
 */
export function register(program: Command): void {
  program
    .command('eval')
    .description('evaluate a team: independent K = 1 rollouts, fixed decoding, success rate with a 95% Wilson interval')
    .argument(
      '[spec]',
      'team spec file (YAML); default: the spec the --checkpoint run was trained from, else the embedded default team',
    )
    .option(
      '--checkpoint <dir>',
      "load trained weights: a checkpoints/step-N folder, a run folder (its newest checkpoint), or a run's checkpoints/best.json (the best validation checkpoint, algorithm.keepBest)",
    )
    .option('--split <split>', `split: ${SPLITS.join(', ')}`, 'test')
    .option(
      '-n, --episodes <n>',
      "episodes (default: the spec's evaluation.episodes)",
      positiveInt('--episodes', teamNumberRange('evaluation.episodes').maximum),
    )
    .option('--seed <n>', "seed of the instances (default: the spec's)", integer('--seed', teamNumberRange('seed')))
    .option('--decoding <mode>', "greedy (temperature 0) or spec (each seat's sampling)", 'greedy')
    .option(
      '--concurrency <n>',
      'episodes at once',
      positiveInt('--concurrency', teamNumberRange('algorithm.concurrency').maximum),
      4,
    )
    .option(
      '--trace <file>',
      'write the episodes as a JSONL trace, one record per agent turn (prompt, completion, action, reward)',
    )
    .option(
      '--baseline <dir>',
      'also play the same episodes with these weights first (e.g. RUN/checkpoints/step-0, the warm start) and compare episode by episode: gained, lost, exact McNemar p',
    )
    .option(
      '--redis <url>',
      "play the episodes as jobs on this Redis, with `troupe worker` processes (overrides the spec's execution; workers must see --checkpoint at the same path; docs/scale-out.md)",
    )
    .option('--json', 'print one JSON document')
    .action(async (file: string | undefined, opts: EvalOptions) => {
      if (!(SPLITS as readonly string[]).includes(opts.split))
        throw new UsageError(`--split must be one of ${SPLITS.join(', ')}, got "${opts.split}"`);
      if (opts.decoding !== 'greedy' && opts.decoding !== 'spec')
        throw new UsageError(`--decoding must be greedy or spec, got "${opts.decoding}"`);
      if (opts.baseline !== undefined && opts.checkpoint === undefined)
        throw new UsageError(
          '--baseline needs --checkpoint: the weights compared with the baseline (e.g. --checkpoint RUN --baseline RUN/checkpoints/step-0)',
        );
      const checkpoint = opts.checkpoint ? await resolveCheckpoint(opts.checkpoint) : undefined;
      const baseline = opts.baseline ? await resolveCheckpoint(opts.baseline, '--baseline') : undefined;
      const spec = await evaluationSpec(file, checkpoint, opts.checkpoint);
      const {
        evaluateTeam,
        formatPairedComparison,
        pairedComparison,
        policyHandles,
        restoreWeights,
        startDistributedRollouts,
      } = await importOptional('@troupe/trainer', 'troupe eval', () => import('@troupe/trainer'));
      const config = resolveTrainerConfig(spec);
      const execution = resolveExecution(spec, await checkExecution(spec, opts));
      const team = await composeTeam(spec);
      let trace: TraceWriter | undefined;
      let engine: Awaited<ReturnType<typeof startDistributedRollouts>> | undefined;
      try {
        const handles = policyHandles(
          spec,
          team.policies,
          team.seats.map((s) => s.name),
          config,
        );
        const episodes = opts.episodes ?? spec.evaluation.episodes;
        const seed = opts.seed ?? spec.seed;
        // distributed: workers load the weights evaluated from their folder (the checkpoint or the baseline)
        let weights: string | undefined;
        if (execution.engine === 'bullmq')
          engine = await startDistributedRollouts(spec, config, handles, execution, { runDir: tmpdir() });
        const distributed = engine;
        const play = (onEvent?: EvaluateOptions['onEvent']): Promise<EvaluationResult> =>
          evaluateTeam(team, {
            batching: execution.batching,
            ...(distributed
              ? {
                  engine: {
                    playEval: (i, o) =>
                      distributed.playEval(
                        i,
                        o,
                        weights !== undefined ? { dir: weights, versions: {} } : { versions: {} },
                      ),
                  },
                }
              : {}),
            split: opts.split as Split,
            episodes,
            seed,
            concurrency: opts.concurrency,
            decoding: opts.decoding as 'greedy' | 'spec',
            grammar: config.constrainedDecoding,
            ...(onEvent ? { onEvent } : {}),
          });
        // the baseline first (untraced), then the checkpoint's weights on the same episodes
        let before: EvaluationResult | undefined;
        if (baseline) {
          await restoreWeights(baseline, handles);
          weights = baseline;
          before = await play();
        }
        if (checkpoint) await restoreWeights(checkpoint, handles);
        weights = checkpoint;
        trace = opts.trace ? new TraceWriter(opts.trace) : undefined;
        const writer = trace;
        const r = await play(writer ? (e) => writer.next(e) : undefined);
        await trace?.close();
        const compared = before ? { before, paired: pairedComparison(before.outcomes, r.outcomes) } : undefined;
        const report = {
          spec: spec.file,
          checkpoint: checkpoint ?? null,
          environment: team.environment.id,
          split: r.split,
          seed,
          decoding: opts.decoding,
          episodes: r.episodes,
          ...summary(r),
          ...(trace ? { trace: opts.trace, trace_records: trace.records } : {}),
          ...(compared
            ? {
                baseline: { checkpoint: baseline, ...summary(compared.before) },
                comparison: (({ episodes, delta, gained, lost, pValue }) => ({
                  episodes,
                  delta,
                  gained,
                  lost,
                  p_value: pValue,
                }))(compared.paired),
              }
            : {}),
        };
        if (opts.json) printJson(report);
        else {
          const out = process.stdout;
          out.write(
            `${spec.name}${checkpoint ? ` @ ${checkpoint}` : ''}: ${r.episodes} episodes of ${team.environment.id} (${r.split} split, ${opts.decoding} decoding, K = 1)\n`,
          );
          out.write(`  success rate      ${rateWithCi(r)}\n`);
          for (const [seat, v] of Object.entries(r.meanReward))
            out.write(
              `  ${`reward/${seat}`.padEnd(18)}${v.toFixed(4)}  (parse failures ${((r.parseFailureRate[seat] ?? 0) * 100).toFixed(1)}%)\n`,
            );
          if (trace) out.write(`  trace             ${opts.trace} (${trace.records} records)\n`);
          if (compared) {
            out.write(`  baseline          ${rateWithCi(compared.before)} @ ${baseline}\n`);
            out.write(`  paired            ${formatPairedComparison(compared.paired)}\n`);
          }
        }
      } finally {
        await trace?.close().catch(() => undefined);
        await engine?.close();
        await team.dispose();
      }
    });
}
