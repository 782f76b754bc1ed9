import type { Command } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  loadTeamSpec,
  PRESETS_DIR,
  resolveExecution,
  teamNumberRange,
  type ExecutionOverrides,
  type TeamSpec,
} from '@troupe/kernel';
// The model entry (tfjs, transformers) loads only when a command needs it: `troupe --version` and the light commands
// start in a fraction of the time.
import type { TrainerEvent, ReportChart } from '@troupe/trainer';
import { CliError, positiveInt, printJson } from '../errors.js';
import { importOptional } from '../optional.js';

interface TrainOptions {
  out?: string;
  steps?: number;
  sampleBudget?: number;
  resume?: boolean;
  json?: boolean;
  progress: boolean;
  finalEval: boolean;
  redis?: string;
  shared?: string;
}

/**
 * The command line's overrides of the spec's `execution` (`--redis`, `--shared`), after checking that the Redis of a
 * distributed run answers (a clear error, not a hang, when it does not).
 */
export async function checkExecution(
  spec: TeamSpec,
  opts: { readonly redis?: string; readonly shared?: string },
): Promise<ExecutionOverrides> {
  const overrides: ExecutionOverrides = {
    ...(opts.redis !== undefined ? { redis: opts.redis } : {}),
    ...(opts.shared !== undefined ? { shared: opts.shared } : {}),
  };
  const execution = resolveExecution(spec, overrides);
  if (execution.engine === 'bullmq') {
    const { redisProblem, START_REDIS_HINT } = await importOptional(
      '@troupe/trainer',
      'troupe train',
      () => import('@troupe/trainer'),
    );
    const problem = await redisProblem(execution.redis!);
    if (problem) throw new CliError(`${problem}; ${START_REDIS_HINT} (execution.redis or --redis)`);
  }
  return overrides;
}

/**
 * Runs the trainer; Redis lost for longer than `execution.redisTimeoutMs` stops the run with a clear error (the
 * checkpoints so far stay; `--resume` continues from the newest).
 */
export async function runStoppingOnQueueLoss<R>(
  trainer: { run(): Promise<R>; stepsDone: number; folder: { checkpointedStep: number } },
  out: string,
): Promise<R> {
  try {
    return await trainer.run();
  } catch (err) {
    if (err instanceof Error && err.name === 'QueueUnavailableError')
      throw new CliError(
        `the run stopped in step ${trainer.stepsDone + 1}: ${err.message}. Its newest checkpoint is step ${trainer.folder.checkpointedStep} in ${out}; once Redis is back, rerun the same command with --resume to continue.`,
      );
    throw err;
  }
}

/** Loads SPEC, or the embedded default team when none is given. */
export function loadSpecOrDefault(file: string | undefined): TeamSpec {
  return loadTeamSpec(file ?? join(PRESETS_DIR, 'default-team.yaml'));
}

/**
 * `troupe train [SPEC]`: warm start (when configured) + AT-GRPO / grpo-naive training, periodic validation, final
 * held-out evaluation; writes trace.jsonl, metrics.jsonl, checkpoints/step-N/, report.md and plots/ to --out.
 */
export function register(program: Command): void {
  program
    .command('train')
    .description(
      'train a team (AT-GRPO); without SPEC, the embedded default team (Plan-Path, a coder proposer and a planner executor, two tiny models, warm start + AT-GRPO)',
    )
    .argument('[spec]', 'team spec file (YAML); default: the embedded default team')
    .option('-o, --out <dir>', 'output folder (default: runs/<spec name>)')
    .option(
      '--steps <n>',
      "training steps (default: the spec's algorithm.steps)",
      positiveInt('--steps', teamNumberRange('algorithm.steps').maximum),
    )
    .option(
      '--sample-budget <n>',
      'stop before the next step once the steps have generated this many rollout samples (resumed steps count; --steps stays the most steps; a decaying lrSchedule decays over the budget)',
      positiveInt('--sample-budget'),
    )
    .option('--resume', 'continue from the newest checkpoint in --out (optimizer, RNG, step counter restored)')
    .option('--no-final-eval', 'skip the final evaluation on the held-out split')
    .option(
      '--redis <url>',
      "play the rollouts as jobs on this Redis, with `troupe worker` processes (overrides the spec's execution; docs/scale-out.md)",
    )
    .option(
      '--shared <dir>',
      'the folder of policy versions the workers load (execution.checkpoints; default <out>/policies): on other machines, a shared folder at the same path',
    )
    .option('--json', 'print one JSON document (the run summary) on stdout')
    .option('--no-progress', 'no progress display on stderr')
    .action(async (file: string | undefined, opts: TrainOptions) => {
      const spec = loadSpecOrDefault(file);
      const out = resolve(opts.out ?? join('runs', spec.name));
      const progress = new TrainProgress(opts.progress && !opts.json);
      const { describeWeightMemory, formatPairedComparison, Trainer, weightMemory } = await importOptional(
        '@troupe/trainer',
        'troupe train',
        () => import('@troupe/trainer'),
      );
      const execution = await checkExecution(spec, opts);
      const trainer = await Trainer.create(spec, {
        outDir: out,
        execution,
        ...(opts.steps !== undefined ? { steps: opts.steps } : {}),
        ...(opts.sampleBudget !== undefined ? { sampleBudget: opts.sampleBudget } : {}),
        ...(opts.resume ? { resume: true } : {}),
        skipFinalEval: !opts.finalEval,
        onEvent: (e) => {
          if (e.type === 'start')
            for (const w of e.warnings ?? []) process.stderr.write(`troupe train: warning: ${w}\n`);
          if (e.type === 'waiting') process.stderr.write(`troupe train: ${e.message}\n`);
          progress.next(e);
        },
      });
      // what the weights hold: each base once (LoRA policies of one base share it), each policy's adapters
      const memory = weightMemory(trainer.handles);
      if (!opts.json && memory.bases.length > 0)
        process.stderr.write(`troupe train: ${describeWeightMemory(memory)}\n`);
      try {
        const result = await runStoppingOnQueueLoss(trainer, out);
        progress.done();
        const plots = await writeReport(out, spec.name);
        if (opts.json) {
          printJson({
            spec: spec.file,
            out,
            level: result.level,
            steps: result.steps,
            samples_generated: result.samplesGenerated,
            stopped_by: result.stoppedBy,
            resumed_from: result.resumedFrom ?? null,
            memory,
            seconds: result.seconds,
            plots,
            final_eval: result.finalEval
              ? (({ instanceKeys: _keys, outcomes: _o, ...rest }) => rest)(result.finalEval)
              : null,
            warm_start: result.warmStart ?? null,
            baseline: result.baseline
              ? {
                  ...(({ outcomes: _o, ...rest }) => rest)(result.baseline.eval),
                  comparison: result.baseline.comparison,
                }
              : null,
            best: result.best
              ? { step: result.best.step, success_rate: result.best.successRate, checkpoint: result.best.dir }
              : null,
          });
        } else {
          const budget = result.stoppedBy === 'sample-budget' ? `, sample budget ${opts.sampleBudget} reached` : '';
          process.stdout.write(
            `${spec.name}: ${result.steps} steps (${result.level}; ${result.samplesGenerated} samples generated${budget}) in ${result.seconds.toFixed(1)} s → ${out}\n`,
          );
          if (result.finalEval) {
            const e = result.finalEval;
            process.stdout.write(
              `  ${e.split} success ${e.successRate.toFixed(3)} (95% CI ${e.ci95[0].toFixed(3)}–${e.ci95[1].toFixed(3)}, ${e.episodes} episodes)\n`,
            );
          }
          if (result.baseline) {
            process.stdout.write(
              `  vs start of RL    ${formatPairedComparison(result.baseline.comparison)} (the same episodes)\n`,
            );
          }
          if (result.best) {
            process.stdout.write(
              `  best validation   step ${result.best.step}, success ${result.best.successRate.toFixed(3)} → ${result.best.dir}\n`,
            );
          }
          process.stdout.write(
            `  report            ${join(out, 'report.md')}${plots.rendered ? '' : ` (plots not rendered: ${plots.reason})`}\n`,
          );
        }
      } finally {
        await trainer.dispose();
      }
    });
}

/** Writes report.md and renders its plots (vega-lite → SVG with vega's headless View, → PNG with resvg). */
export async function writeReport(
  out: string,
  title: string,
): Promise<{ rendered: boolean; reason?: string; files: string[] }> {
  const { buildReport } = await importOptional('@troupe/trainer', 'troupe train', () => import('@troupe/trainer'));
  const report = buildReport(out, title);
  writeFileSync(join(out, 'report.md'), report.markdown);
  return renderChartsTo(join(out, 'plots'), report.charts);
}

/** Renders each chart to `<dir>/<name>.svg` and `.png`; a rendering failure is reported, not thrown. */
export async function renderChartsTo(
  dir: string,
  charts: readonly ReportChart[],
): Promise<{ rendered: boolean; reason?: string; files: string[] }> {
  const files: string[] = [];
  try {
    mkdirSync(dir, { recursive: true });
    for (const chart of charts) {
      const { svg, png } = await renderChart(chart);
      writeFileSync(join(dir, `${chart.name}.svg`), svg);
      writeFileSync(join(dir, `${chart.name}.png`), png);
      files.push(join(dir, `${chart.name}.svg`), join(dir, `${chart.name}.png`));
    }
    return { rendered: true, files };
  } catch (err) {
    return { rendered: false, reason: err instanceof Error ? err.message : String(err), files };
  }
}

export async function renderChart(chart: ReportChart): Promise<{ svg: string; png: Buffer }> {
  const vl = await import('vega-lite');
  const vega = await import('vega');
  const { Resvg } = await import('@resvg/resvg-js');
  const compiled = vl.compile(chart.spec as never).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  const png = new Resvg(svg, { background: 'white', fitTo: { mode: 'width', value: 960 } }).render().asPng();
  return { svg, png };
}

/** Progress on stderr: a self-rewriting line on a TTY, plain lines otherwise. */
class TrainProgress {
  private readonly tty = Boolean(process.stderr.isTTY);
  private stepSeconds = 0;
  private stepsSeen = 0;

  constructor(private readonly enabled: boolean) {}

  next(e: TrainerEvent): void {
    if (!this.enabled) return;
    switch (e.type) {
      case 'start':
        this.line(
          `training ${e.level}, steps ${e.firstStep}..${e.steps}${e.resumedFrom !== undefined ? ` (resumed from step ${e.resumedFrom})` : ''}${e.frozen.length > 0 ? `; frozen: ${e.frozen.join(', ')}` : ''}`,
          true,
        );
        return;
      case 'warm-start':
        if (e.phase === 'demonstrations') this.line(`warm start: ${e.count} demonstration samples`, true);
        else
          this.line(
            `warm start: ${e.policy} epoch ${(e.epoch ?? 0) + 1} loss ${(e.loss ?? NaN).toFixed(4)}`,
            !this.tty,
          );
        return;
      case 'eval':
        this.line(
          `eval (${e.result.split}) after step ${e.step}: success ${e.result.successRate.toFixed(3)} [${e.result.ci95[0].toFixed(2)}, ${e.result.ci95[1].toFixed(2)}] over ${e.result.episodes}`,
          true,
        );
        return;
      case 'step': {
        const m = e.metrics;
        // ETA from the mean duration of the steps seen so far (their own time, evaluation included)
        this.stepSeconds += (m['time/step'] as number) + ((m['time/eval'] as number | undefined) ?? 0);
        this.stepsSeen++;
        const eta = ((e.steps - e.step) * this.stepSeconds) / this.stepsSeen;
        const rewards = Object.keys(m)
          .filter((k) => k.startsWith('rollout/reward/'))
          .map((k) => `${k.slice(15)} ${(m[k] as number).toFixed(2)}`)
          .join(' ');
        const tps = m['perf/generated_tokens_per_s'] as number;
        // distributed: the workers, the failed jobs and retries of the step, and what waits in the queue
        const scale =
          m['scale/jobs'] !== undefined
            ? `  workers ${m['scale/workers_used']}/${m['scale/workers'] ?? '?'} failed ${m['scale/failed_jobs']} retries ${m['scale/retries']} queue ${m['scale/queue_depth'] ?? '?'}`
            : '';
        this.line(
          `step ${e.step}/${e.steps}  success ${(m['rollout/success_rate'] as number).toFixed(2)}  reward ${rewards}  ${tps.toFixed(0)} tok/s  ${(m['time/step'] as number).toFixed(1)} s/step${scale}  eta ${formatEta(eta)}`,
          !this.tty,
        );
        return;
      }
      default:
        return;
    }
  }

  done(): void {
    if (this.enabled && this.tty) process.stderr.write('\n');
  }

  private line(text: string, newline: boolean): void {
    if (this.tty) process.stderr.write(`\r${text}\x1b[K${newline ? '\n' : ''}`);
    else process.stderr.write(`${text}\n`);
  }
}

function formatEta(s: number): string {
  if (!Number.isFinite(s)) return '?';
  const m = Math.floor(s / 60);
  return m > 0
    ? `${m}m${Math.round(s % 60)
        .toString()
        .padStart(2, '0')}s`
    : `${Math.round(s)}s`;
}
