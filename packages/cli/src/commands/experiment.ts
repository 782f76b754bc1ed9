import type { Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTeamSpec, PRESETS_DIR, teamNumberRange, type TeamSpec } from '@troupe/kernel';
import type { ArmName, ExperimentEvent, GameInput, RunResult } from '@troupe/experiment';
import { CliError, finiteNumber, positiveInt, printJson, UsageError } from '../errors.js';
import { importOptional } from '../optional.js';

/** `@troupe/experiment`, imported when the command runs (it brings the trainer and tfjs). */
type ExperimentModule = typeof import('@troupe/experiment');
const loadExperiment = (): Promise<ExperimentModule> =>
  importOptional('@troupe/experiment', 'troupe experiment', () => import('@troupe/experiment'));
import { renderChartsTo } from './train.js';

/** The games of the paper's table and the preset of each one's base (per-role) team spec. */
export const GAME_PRESETS: Readonly<Record<string, string>> = Object.freeze({
  'plan-path': 'plan-path-coder-team',
  sokoban: 'sokoban-coder-team',
  sudoku: 'sudoku-coder-team',
});

interface PaperTableOptions {
  games: string;
  arms?: string;
  seeds: number;
  budget?: number;
  steps?: number;
  episodes?: number;
  jobs: number;
  runTimeout?: number;
  out?: string;
  spec: string[];
  reuse?: string;
  reportOnly?: boolean;
  json?: boolean;
  progress: boolean;
}

/** The command line that starts this same CLI in a child process (from source under tsx, or the built one). */
export function troupeLauncher(): string[] {
  const self = fileURLToPath(import.meta.url);
  if (self.endsWith('.ts')) {
    return [
      process.execPath,
      '--conditions=troupe:source',
      '--import',
      import.meta.resolve('tsx'),
      join(dirname(self), '..', 'main.ts'),
    ];
  }
  return [process.execPath, join(dirname(self), '..', 'main.js')];
}

/** Exit status of a process ended by these signals (128 + the signal number). */
const STOP_SIGNALS = { SIGINT: 130, SIGHUP: 129, SIGTERM: 143 } as const;

/**
 * Runs `body` with an AbortSignal that SIGINT, SIGTERM or SIGHUP to this process aborts (the experiment then stops its
 * children instead of leaving them to train as orphans, see `ExperimentOptions.signal`); an interrupted experiment
 * becomes a CliError with the signal's exit status.
 */
async function withStopSignals<T>(
  { ExperimentInterrupted }: ExperimentModule,
  body: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let received: keyof typeof STOP_SIGNALS | undefined;
  const handlers = (Object.keys(STOP_SIGNALS) as (keyof typeof STOP_SIGNALS)[]).map((name) => {
    const handler = (): void => {
      if (received) return;
      received = name;
      process.stderr.write(`paper-table: ${name}: stopping the running runs (SIGTERM to each child)…\n`);
      controller.abort();
    };
    process.on(name, handler);
    return [name, handler] as const;
  });
  try {
    return await body(controller.signal);
  } catch (err) {
    if (err instanceof ExperimentInterrupted) throw new CliError(err.message, STOP_SIGNALS[received ?? 'SIGINT']);
    throw err;
  } finally {
    for (const [name, handler] of handlers) process.off(name, handler);
  }
}

/** Parses `--run-timeout SECONDS`: a positive number. */
function positiveSeconds(flag: string): (raw: string) => number {
  const parse = finiteNumber(flag);
  return (raw: string): number => {
    const n = parse(raw);
    if (!(n > 0)) throw new UsageError(`${flag} must be a positive number of seconds, got "${raw}"`);
    return n;
  };
}

/** Resolves each game's base spec: `--spec game=FILE`, else its preset. Errors name the game and what to do. */
export function loadGames(games: readonly string[], overrides: readonly string[]): GameInput[] {
  const files = new Map<string, string>();
  for (const o of overrides) {
    const m = /^([^=]+)=(.+)$/.exec(o);
    if (!m) throw new UsageError(`--spec must be GAME=FILE (e.g. --spec plan-path=./team.yaml), got "${o}"`);
    files.set(m[1]!.trim(), m[2]!.trim());
  }
  for (const g of files.keys()) {
    if (!games.includes(g)) throw new UsageError(`--spec ${g}=...: "${g}" is not among --games (${games.join(', ')})`);
  }
  return games.map((game): GameInput => {
    const file = files.get(game);
    if (file) return { name: game, spec: loadTeamSpec(file) };
    const preset = GAME_PRESETS[game];
    if (!preset) {
      throw new UsageError(
        `unknown game "${game}"; the games with a preset are ${Object.keys(GAME_PRESETS).join(', ')} (or give --spec ${game}=FILE)`,
      );
    }
    const presetFile = join(PRESETS_DIR, `${preset}.yaml`);
    if (!existsSync(presetFile)) {
      throw new CliError(
        `game ${game}: its base spec, the preset '${preset}', is not shipped (no ${presetFile}); pass --spec ${game}=FILE or leave ${game} out of --games`,
      );
    }
    return { name: game, spec: loadTeamSpec(presetFile) as TeamSpec };
  });
}

/**
 * Reads `--reuse FILE`: an earlier experiment's results.json (its `runs`). Errors name the file, the key and what to
 * give instead.
 */
export function loadReuse(file: string): { file: string; runs: RunResult[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new UsageError(
      `--reuse ${file}: cannot read it as JSON (${why}); give the results.json an earlier troupe experiment paper-table wrote`,
    );
  }
  const runs = (doc as { runs?: unknown } | null)?.runs;
  if (!Array.isArray(runs))
    throw new UsageError(
      `--reuse ${file}: no "runs" list; give the results.json an earlier troupe experiment paper-table wrote`,
    );
  for (const [i, r] of runs.entries()) {
    const x = r as Partial<RunResult> | null;
    if (
      !x ||
      typeof x.game !== 'string' ||
      typeof x.arm !== 'string' ||
      typeof x.seed !== 'number' ||
      typeof x.digest !== 'string' ||
      typeof x.status !== 'string'
    ) {
      throw new UsageError(
        `--reuse ${file}: runs[${i}] is not a run result (it needs game, arm, seed, digest and status); give the results.json an earlier troupe experiment paper-table wrote`,
      );
    }
  }
  return { file, runs: runs as RunResult[] };
}

/** One line per run on stderr. */
function progress({ ARMS }: ExperimentModule, enabled: boolean, total: () => number): (e: ExperimentEvent) => void {
  let finished = 0;
  const tag = (r: { game: string; arm: string; seed: number }): string => `${r.game} ${r.arm} seed ${r.seed}`;
  const say = (s: string): void => {
    if (enabled) process.stderr.write(`${s}\n`);
  };
  const outcome = (r: RunResult): string => {
    if (r.status !== 'ok' || !r.eval) return `FAILED: ${(r.error ?? '').split('\n')[0]}`;
    const samples = ARMS[r.arm].rl ? `, ${r.samples.generated} samples in ${r.samples.steps} steps` : '';
    return `success ${r.eval.successes}/${r.eval.episodes} (${(100 * r.eval.successRate).toFixed(1)}%)${samples}, ${r.seconds.toFixed(0)} s`;
  };
  return (e) => {
    switch (e.type) {
      case 'plan':
        say(`paper-table: ${e.runs.length} runs`);
        return;
      case 'cached':
        finished++;
        say(
          `[${finished}/${total()}] ${tag(e.run)}: done earlier${e.result.reusedFrom !== undefined ? ` (reused from ${e.result.reusedFrom})` : ''} — ${outcome(e.result)}`,
        );
        return;
      case 'reuse-mismatch':
        say(
          `      ${tag(e.run)}: ${e.file} holds this run under another plan (spec, budget, episodes or its source changed): running it anew`,
        );
        return;
      case 'start':
        say(
          `      ${tag(e.run)}: start → ${e.run.dir}${e.run.source && ARMS[e.run.arm].uses === 'warm-start' ? ` (from the ${e.run.source.arm} warm start)` : ''}`,
        );
        return;
      case 'child':
        say(
          `      ${tag(e.run)}: troupe ${e.args[0]}${e.args.includes('--steps') ? ` --steps ${e.args[e.args.indexOf('--steps') + 1]}` : ''}`,
        );
        return;
      case 'done':
        finished++;
        say(`[${finished}/${total()}] ${tag(e.run)}: ${outcome(e.result)}`);
        return;
      default:
        return;
    }
  };
}

/**
 * `troupe experiment paper-table`: the paper's baselines table at our scale — arms × games × seeds, each a child
 * `troupe train` / `troupe eval` on a generated spec; writes table.md, results.json, plots/ and the run folders.
 */
export function register(program: Command): void {
  const experiment = program
    .command('experiment')
    .description("run experiments made of many training runs (the paper's table)");
  experiment
    .command('paper-table')
    .description(
      "the paper's baselines table at our scale: every arm (single agent, MAS prompt-only, naive GRPO, AT-GRPO shared / per-role, swapped roles) × games × seeds, with equal sample budgets",
    )
    .option(
      '--games <list>',
      `comma-separated games (${Object.keys(GAME_PRESETS).join(', ')})`,
      Object.keys(GAME_PRESETS).join(','),
    )
    .option(
      '--arms <list>',
      "comma-separated arms (default: all of the table's arms; a wrong name is answered with the list); the arms they start from or evaluate are added (mas-atgrpo-per-role and mas-naive-grpo → mas-prompt, single-grpo → single, swap → mas-atgrpo-per-role)",
    )
    .option('--seeds <n>', 'seeds per game and arm', positiveInt('--seeds'), 3)
    .option(
      '--budget <samples>',
      "generated RL samples per RL run (default: the base spec's steps × its samples per step)",
      positiveInt('--budget'),
    )
    .option(
      '--steps <n>',
      'alternative to --budget: the budget of N steps of the per-role base team',
      positiveInt('--steps', teamNumberRange('algorithm.steps').maximum),
    )
    .option(
      '-n, --episodes <n>',
      "held-out test episodes per run (default: the base spec's evaluation.episodes)",
      positiveInt('--episodes', teamNumberRange('evaluation.episodes').maximum),
    )
    .option(
      '--jobs <n>',
      'runs at once (child processes; the wasm backend uses one core each); a run waits for the run it starts from',
      positiveInt('--jobs'),
      1,
    )
    .option(
      '--run-timeout <seconds>',
      'most wall seconds of one run: past it its child is killed and the run recorded as failed (default: no limit)',
      positiveSeconds('--run-timeout'),
    )
    .option('-o, --out <dir>', 'output folder', join('runs', 'paper-table'))
    .option(
      '--spec <game=file>',
      'base spec of a game instead of its preset (repeatable)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--reuse <results.json>',
      "reuse the finished runs of an earlier experiment's results.json that have the same plan (game, arm, seed, digest) instead of running them, e.g. to add seeds to a committed table",
    )
    .option(
      '--report-only',
      'run nothing: write the table of the runs finished so far (the others are shown as not run yet or failed)',
    )
    .option('--json', 'print one JSON document (where everything is, and the cells)')
    .option('--no-progress', 'no progress lines on stderr')
    .action(async (opts: PaperTableOptions) => {
      const experimentModule = await loadExperiment();
      const {
        ARM_NAMES,
        ARMS,
        collectResults,
        ExperimentError,
        notRunYet,
        parseArmList,
        planExperiment,
        runExperiment,
        tableCells,
        formatCell,
        writeExperimentReport,
      } = experimentModule;
      const reuse = opts.reuse !== undefined ? loadReuse(opts.reuse) : undefined;
      if (opts.budget !== undefined && opts.steps !== undefined)
        throw new UsageError('give --budget or --steps, not both');
      const gameNames = [
        ...new Set(
          opts.games
            .split(',')
            .map((g) => g.trim())
            .filter((g) => g.length > 0),
        ),
      ];
      if (gameNames.length === 0) throw new UsageError('--games: no game given');
      let arms: ArmName[];
      try {
        arms = opts.arms !== undefined ? parseArmList(opts.arms) : [...ARM_NAMES];
      } catch (err) {
        if (err instanceof ExperimentError) throw new UsageError(err.message);
        throw err;
      }
      const named = opts.arms?.split(',').map((a) => a.trim()) ?? [];
      const added = opts.arms !== undefined ? arms.filter((a) => !named.includes(a)) : [];
      const games = loadGames(gameNames, opts.spec);
      const out = resolve(opts.out ?? join('runs', 'paper-table'));
      const settings = {
        games: gameNames,
        arms,
        seeds: opts.seeds,
        out,
        jobs: opts.jobs,
        ...(opts.budget !== undefined ? { budget: opts.budget } : {}),
        ...(opts.steps !== undefined ? { steps: opts.steps } : {}),
        ...(opts.episodes !== undefined ? { episodes: opts.episodes } : {}),
      };
      const plan = planExperiment({ ...settings, games, outDir: out }); // derivation errors surface before anything runs
      // Said on stderr also with --json and --no-progress: the runs are more than the user named.
      const neededBy = (a: ArmName): ArmName[] => arms.filter((x) => ARMS[x].dependsOn === a);
      if (added.length > 0)
        process.stderr.write(
          `paper-table: --arms: added ${added.map((a) => `${a} (needed by ${neededBy(a).join(', ')})`).join(', ')}\n`,
        );
      const budgets = Object.fromEntries(
        gameNames
          .map((g) => [g, plan.find((r) => r.game === g && ARMS[r.arm].rl)?.derived.budget.budget ?? 0])
          .filter(([, b]) => (b as number) > 0),
      );
      const result = opts.reportOnly
        ? collectResults({ ...settings, games, outDir: out, ...(reuse ? { reuse } : {}) })
        : await withStopSignals(experimentModule, (signal) =>
            runExperiment({
              ...settings,
              games,
              outDir: out,
              launcher: troupeLauncher(),
              onEvent: progress(experimentModule, opts.progress && !opts.json, () => plan.length),
              ...(opts.runTimeout !== undefined ? { runTimeout: opts.runTimeout } : {}),
              ...(reuse ? { reuse } : {}),
              signal,
            }),
          );
      const report = writeExperimentReport(out, result.runs, {
        ...settings,
        budgets,
        specs: Object.fromEntries(games.map((g) => [g.name, g.spec.file])),
      });
      const plots = await renderChartsTo(join(out, 'plots'), report.charts);
      const failed = result.runs.filter((r) => r.status !== 'ok' && !notRunYet(r));
      const notRun = result.runs.filter(notRunYet);
      if (opts.json) {
        printJson({
          out,
          arms,
          arms_added: added.map((a) => ({ arm: a, needed_by: neededBy(a) })),
          table: report.table,
          results: report.results,
          plots: plots.rendered ? plots.files : report.chartSpecs,
          plots_rendered: plots.rendered,
          runs: result.runs.length,
          reused: result.runs.filter((r) => r.reusedFrom !== undefined).length,
          not_run_yet: notRun.map((r) => ({ game: r.game, arm: r.arm, seed: r.seed, dir: join(out, r.dir) })),
          failed: failed.map((r) => ({
            game: r.game,
            arm: r.arm,
            seed: r.seed,
            dir: join(out, r.dir),
            error: r.error,
          })),
          cells: tableCells(result.runs, { ...settings, budgets }).map((c) => ({
            game: c.game,
            arm: c.arm,
            mean: c.mean ?? null,
            std: c.std ?? null,
            seeds: c.n,
            failed: c.failed,
            not_run_yet: c.notRun,
            samples: c.samples,
            values: c.values,
          })),
        });
      } else {
        const w = (s: string): void => void process.stdout.write(`${s}\n`);
        const reused = result.runs.filter((r) => r.reusedFrom !== undefined).length;
        w(
          `paper-table: ${result.runs.length} runs (${failed.length} failed${notRun.length ? `, ${notRun.length} not run yet` : ''}${reused ? `, ${reused} reused` : ''}) → ${out}`,
        );
        const cells = tableCells(result.runs, { ...settings, budgets });
        const width = Math.max(...arms.map((a) => a.length));
        w(`  ${''.padEnd(width)}  ${gameNames.map((g) => g.padEnd(16)).join('')}`);
        for (const a of arms)
          w(
            `  ${a.padEnd(width)}  ${gameNames.map((g) => formatCell(cells.find((c) => c.arm === a && c.game === g)!).padEnd(16)).join('')}`,
          );
        w(`  table             ${report.table}`);
        w(`  results           ${report.results}`);
        w(`  plots             ${join(out, 'plots')}${plots.rendered ? '' : ` (not rendered: ${plots.reason})`}`);
        for (const r of failed)
          w(
            `  failed: ${r.game} ${r.arm} seed ${r.seed} (${relative(process.cwd(), join(out, r.dir))}/failure.json, troupe.log)`,
          );
      }
      if (failed.length > 0) process.exitCode = 1;
    });
}
