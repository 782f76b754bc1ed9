import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import type { TrainerEvent } from '@troupe/trainer';
import { teamNumberRange } from '@troupe/kernel';
import { finiteNumber, positiveInt, printJson } from '../errors.js';
import { loadSpecOrDefault, writeReport } from './train.js';
import { importOptional } from '../optional.js';

interface SftOptions {
  out?: string;
  demonstrations?: number;
  epochs?: number;
  lr?: number;
  episodes?: number;
  json?: boolean;
  progress: boolean;
}

/**
 * `troupe sft [SPEC]`: the warm start alone — SFT of every trainable policy on the environment oracle's
 * demonstrations (each seat's role renders the oracle action; prompts come from the real observations along the oracle
 * trajectory), then the held-out evaluation. Writes checkpoints/step-0/ (loadable by `troupe eval --checkpoint`).
 */
export function register(program: Command): void {
  program
    .command('sft')
    .description('warm start only: supervised fine-tuning on oracle demonstrations, then held-out evaluation')
    .argument('[spec]', 'team spec file (YAML); default: the embedded default team')
    .option('-o, --out <dir>', 'output folder (default: runs/<spec name>-sft)')
    .option(
      '--demonstrations <n>',
      "oracle play-throughs (default: the spec's algorithm.warmStart.demonstrations)",
      positiveInt('--demonstrations'),
    )
    .option('--epochs <n>', 'passes over the demonstrations', positiveInt('--epochs'))
    .option('--lr <x>', 'learning rate', finiteNumber('--lr'))
    .option(
      '-n, --episodes <n>',
      "evaluation episodes (default: the spec's evaluation.episodes)",
      positiveInt('--episodes', teamNumberRange('evaluation.episodes').maximum),
    )
    .option('--json', 'print one JSON document')
    .option('--no-progress', 'no progress display on stderr')
    .action(async (file: string | undefined, opts: SftOptions) => {
      const loaded = loadSpecOrDefault(file);
      const warm = {
        ...((loaded.algorithm.warmStart as Record<string, unknown> | undefined) ?? {}),
        enabled: true,
        ...(opts.demonstrations !== undefined ? { demonstrations: opts.demonstrations } : {}),
        ...(opts.epochs !== undefined ? { epochs: opts.epochs } : {}),
        ...(opts.lr !== undefined ? { lr: opts.lr } : {}),
      };
      const spec = {
        ...loaded,
        algorithm: { ...loaded.algorithm, steps: 0, evalEvery: 0, warmStart: warm },
        evaluation: { ...loaded.evaluation, ...(opts.episodes !== undefined ? { episodes: opts.episodes } : {}) },
      };
      const out = resolve(opts.out ?? join('runs', `${spec.name}-sft`));
      const show = opts.progress && !opts.json;
      const onEvent = (e: TrainerEvent): void => {
        if (!show) return;
        if (e.type === 'warm-start' && e.phase === 'demonstrations')
          process.stderr.write(`warm start: ${e.count} demonstration samples\n`);
        if (e.type === 'warm-start' && e.phase === 'epoch')
          process.stderr.write(
            `warm start: ${e.policy} epoch ${(e.epoch ?? 0) + 1} loss ${(e.loss ?? NaN).toFixed(4)}\n`,
          );
      };
      const { Trainer } = await importOptional('@troupe/trainer', 'troupe sft', () => import('@troupe/trainer'));
      const trainer = await Trainer.create(spec, { outDir: out, steps: 0, onEvent });
      try {
        const r = await trainer.run();
        await writeReport(out, `${spec.name} (warm start only)`);
        const e = r.finalEval ? (({ instanceKeys: _keys, outcomes: _o, ...rest }) => rest)(r.finalEval) : undefined;
        if (opts.json)
          printJson({
            spec: spec.file,
            out,
            checkpoint: join(out, 'checkpoints', 'step-0'),
            warm_start: r.warmStart ?? null,
            eval: e ?? null,
          });
        else {
          process.stdout.write(
            `${spec.name}: warm start on ${r.warmStart?.demonstrations ?? 0} demonstration samples in ${r.warmStart?.seconds.toFixed(1) ?? '?'} s → ${join(out, 'checkpoints', 'step-0')}\n`,
          );
          for (const [p, l] of Object.entries(r.warmStart?.lastEpochLoss ?? {}))
            process.stdout.write(`  ${p}: SFT loss ${r.warmStart!.firstEpochLoss[p]!.toFixed(4)} → ${l.toFixed(4)}\n`);
          if (e)
            process.stdout.write(
              `  ${e.split} success ${e.successRate.toFixed(3)} (95% CI ${e.ci95[0].toFixed(3)}–${e.ci95[1].toFixed(3)}, ${e.episodes} episodes)\n`,
            );
        }
      } finally {
        await trainer.dispose();
      }
    });
}
