import type { Command } from 'commander';
import { createHostFor, playOracle, SPLITS, type Split } from '@troupe/kernel';
import { integer, positiveInt, printJson, UsageError } from '../errors.js';

interface SampleOptions {
  split: string;
  count: number;
  seed: number;
  config?: string;
  start: number;
  againstTrain: number;
  oracle: boolean;
  json?: boolean;
}

function parseConfig(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined) return {};
  try {
    const value = JSON.parse(raw) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
    return value as Record<string, unknown>;
  } catch (err) {
    throw new UsageError(`--config must be a JSON object, e.g. '{"size": 8}' (${(err as Error).message})`);
  }
}

/** `troupe env sample ENV`: generated instances of a split, with their oracle solutions and a disjointness check. */
export function register(program: Command): void {
  const env = program.command('env').description('inspect environments');
  env
    .command('sample')
    .description('print instances of a split (with oracle solutions when the environment has an oracle)')
    .argument('<env>', 'environment id or shorthand (plan-path, plan-path-v0, @acme/troupe-env-x, ./path)')
    .option('--split <split>', `split: ${SPLITS.join(', ')}`, 'test')
    .option('--count <n>', 'number of instances', positiveInt('--count'), 10)
    .option('--start <n>', 'index of the first instance', integer('--start'), 0)
    .option('--seed <n>', 'instance seed', integer('--seed'), 0)
    .option('--config <json>', 'environment config as a JSON object')
    .option(
      '--against-train <n>',
      'check the instances against the first N train instances (0: skip)',
      integer('--against-train'),
      2000,
    )
    .option('--no-oracle', 'do not play the oracle')
    .option('--json', 'print one JSON document')
    .action(async (name: string, opts: SampleOptions) => {
      if (!(SPLITS as readonly string[]).includes(opts.split))
        throw new UsageError(`--split must be one of ${SPLITS.join(', ')}, got "${opts.split}"`);
      const split = opts.split as Split;
      const host = createHostFor(undefined);
      const entry = await host.ensure('environments', name);
      const environment = host.createEnvironment(entry.id, parseConfig(opts.config), '--config');
      const instances = [];
      let solvedByOracle = 0;
      for (let i = 0; i < opts.count; i++) {
        const index = opts.start + i;
        const instance = environment.instance(split, index, opts.seed);
        const key = environment.instanceKey(instance);
        const play = opts.oracle
          ? await playOracle(environment, instance, { split, instanceUid: `${split}/${index}/${key.slice(0, 12)}` })
          : undefined;
        if (play?.end.success) solvedByOracle++;
        // the oracle's solution, step by step (what it did and what the environment signalled)
        const oracle = play && {
          steps: play.steps.map((s) => ({ turn: s.turn, seat: s.seat, action: s.action, signals: s.signals })),
          success: play.end.success,
          turns: play.end.turns,
        };
        instances.push({ index, key, ...environment.describe(instance), ...(oracle ? { oracle } : {}) });
      }
      // Each overlapping instance once: a small train split (a fixed dataset, `split: all`) wraps around and repeats.
      let disjoint: { checkedTrain: number; distinctTrain: number; overlaps: string[] } | undefined;
      if (split !== 'train' && opts.againstTrain > 0) {
        const keys = new Set(instances.map((x) => x.key));
        const train = new Set<string>();
        for (let i = 0; i < opts.againstTrain; i++)
          train.add(environment.instanceKey(environment.instance('train', i, opts.seed)));
        disjoint = {
          checkedTrain: opts.againstTrain,
          distinctTrain: train.size,
          overlaps: [...keys].filter((k) => train.has(k)),
        };
      }
      const report = {
        environment: environment.id,
        split,
        seed: opts.seed,
        count: instances.length,
        ...(opts.oracle && environment.oracle
          ? { oracle_success_rate: solvedByOracle / Math.max(1, instances.length) }
          : {}),
        ...(disjoint ? { disjoint_from_train: disjoint } : {}),
        instances,
      };
      if (opts.json) printJson(report);
      else {
        process.stdout.write(`${report.count} ${split} instances of ${report.environment} (seed ${opts.seed})\n`);
        for (const x of instances) process.stdout.write(`${JSON.stringify(x)}\n`);
        if ('oracle_success_rate' in report)
          process.stdout.write(`oracle success rate: ${report.oracle_success_rate}\n`);
        if (disjoint) {
          const distinct =
            disjoint.distinctTrain < disjoint.checkedTrain ? ` (${disjoint.distinctTrain} distinct)` : '';
          process.stdout.write(
            `overlap with the first ${disjoint.checkedTrain} train instances${distinct}: ${disjoint.overlaps.length} of the ${new Set(instances.map((x) => x.key)).size} ${split} instances\n`,
          );
        }
      }
      process.exitCode = disjoint && disjoint.overlaps.length > 0 ? 1 : 0;
    });
}
