import type { JsonSchema, Split } from '@troupe/kernel';
import { DEFAULT_SPLIT_FRACTIONS, readConfigSchema, type SplitFractions } from '@troupe/kernel';
import { badLimitValue, type SandboxLimits, type SandboxOptions } from '@troupe/sandbox';
import type { DatasetFormat } from './loaders.js';

/** The seats of the code environment, in turn order. */
export type CodeSeat = 'coder' | 'tester';

/** One user dataset file. */
export interface DatasetSource {
  /** Path of a .jsonl or .parquet file (relative paths resolve against the current directory). */
  readonly path: string;
  /** File format; `auto` detects it from the first row. */
  readonly format: DatasetFormat | 'auto';
  /**
   * How problems are assigned to splits: `hash` (content hash via the kernel's `splitOfContent`, with
   * `splitFractions`), `field` (read from `splitField` of each row), `file` (a JSON file `{ "train": [ids],
   * "validation": [ids], "test": [ids] }`; problems not listed are dropped), or a split name (the whole file is that
   * split).
   */
  readonly split: 'hash' | 'field' | 'file' | Split;
  /** Field holding the split when `split` is `field` (default `split`). */
  readonly splitField: string;
  /** Split file when `split` is `file`. */
  readonly splitFile?: string;
  /** Skip problems without a reference solution (default true). */
  readonly requireReference: boolean;
  /** Keep at most this many problems of the file. */
  readonly limit?: number;
}

/** The validated config of `code-v0` (the team spec's `environment.config`). */
export interface CodeEnvConfig {
  /** Seats: `['coder', 'tester']` (default) or `['coder']` (the single-agent baseline: one-shot, no tester). */
  readonly seats: readonly CodeSeat[];
  /** Turns T (default 3). The single-seat variant always plays one turn. */
  readonly maxTurns: number;
  /** Golden tests scored on the TRAIN split: the first N (default 4, the paper's cap); null = all. */
  readonly maxGoldenTests: number | null;
  /** Golden tests scored on validation and test splits: null (default) = all of them. */
  readonly maxGoldenTestsEval: number | null;
  /** Tester tests that are run per step (extra tests are ignored; default 8). */
  readonly maxTesterTests: number;
  /** Weight w of the discrimination term in the `tester_reward` signal = reference pass rate + w · discrimination (default 0). */
  readonly discriminationWeight: number;
  /** Failing tests shown in the next observation (default 3). */
  readonly maxShownFailures: number;
  /** Float tolerance overriding every problem's own (null = use the problem's). */
  readonly floatTolerance: number | null;
  /** User datasets; empty = the shipped problem set (data/problems.jsonl). */
  readonly datasets: readonly DatasetSource[];
  /** Split fractions for content-hash assignment (default 0.8 / 0.1 / 0.1). */
  readonly splitFractions: SplitFractions;
  /** Limits of every program run (sandbox defaults otherwise: 2 s CPU, 5 s wall, 256 MiB). */
  readonly limits: Partial<SandboxLimits>;
  /** Options of the sandbox the environment creates when none is injected. */
  readonly sandbox: Pick<SandboxOptions, 'isolation' | 'allowUnisolated' | 'concurrency'>;
  /** Outcomes cached (by program, input and expected output); 0 disables the cache. */
  readonly cacheSize: number;
}

const LIMIT_KEYS = ['cpuMs', 'wallMs', 'memoryMb', 'maxProcesses', 'maxOutputBytes', 'maxFileBytes'] as const;

/** JSON schema of the config, with defaults (also in schemas/code.config.json). */
export const CODE_CONFIG_SCHEMA: JsonSchema = readConfigSchema(new URL('../schemas/code.config.json', import.meta.url));

/** An invalid environment config: names the key path and what to do. */
export class CodeConfigError extends Error {
  override readonly name = 'CodeConfigError';
}

/**
 * Fills defaults and checks a raw config (the kernel validates against the schema first; this also guards direct
 * programmatic use).
 * @throws CodeConfigError naming the key path
 */
export function resolveConfig(raw: Record<string, unknown> = {}): CodeEnvConfig {
  const known = new Set([
    'seats',
    'maxTurns',
    'maxGoldenTests',
    'maxGoldenTestsEval',
    'maxTesterTests',
    'maxShownFailures',
    'floatTolerance',
    'discriminationWeight',
    'datasets',
    'splitFractions',
    'limits',
    'sandbox',
    'cacheSize',
  ]);
  for (const key of Object.keys(raw)) {
    if (!known.has(key))
      throw new CodeConfigError(`code-v0 environment.config.${key}: unknown key; known keys: ${[...known].join(', ')}`);
  }
  const seats = (raw['seats'] ?? ['coder', 'tester']) as unknown;
  const seatsOk =
    Array.isArray(seats) &&
    ((seats.length === 2 && seats[0] === 'coder' && seats[1] === 'tester') ||
      (seats.length === 1 && seats[0] === 'coder'));
  if (!seatsOk)
    throw new CodeConfigError(
      `code-v0 environment.config.seats: must be ['coder', 'tester'] or ['coder'], got ${JSON.stringify(seats)}`,
    );
  const int = (key: string, dflt: number | null, min: number, nullable = false): number | null => {
    const v = raw[key] === undefined ? dflt : raw[key];
    if (v === null && nullable) return null;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
      throw new CodeConfigError(
        `code-v0 environment.config.${key}: must be an integer >= ${min}${nullable ? ' or null' : ''}, got ${JSON.stringify(v)}`,
      );
    }
    return v;
  };
  const tol = raw['floatTolerance'] ?? null;
  if (tol !== null && (typeof tol !== 'number' || !(tol >= 0))) {
    throw new CodeConfigError(
      `code-v0 environment.config.floatTolerance: must be a non-negative number or null, got ${JSON.stringify(tol)}`,
    );
  }
  const weight = raw['discriminationWeight'] ?? 0;
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
    throw new CodeConfigError(
      `code-v0 environment.config.discriminationWeight: must be a non-negative number, got ${JSON.stringify(weight)}`,
    );
  }
  const fractions = { ...DEFAULT_SPLIT_FRACTIONS, ...((raw['splitFractions'] ?? {}) as Partial<SplitFractions>) };
  const sum = fractions.train + fractions.validation + fractions.test;
  if (
    ![fractions.train, fractions.validation, fractions.test].every((f) => typeof f === 'number' && f >= 0) ||
    Math.abs(sum - 1) > 1e-9
  ) {
    throw new CodeConfigError(
      `code-v0 environment.config.splitFractions: train, validation and test must be non-negative and sum to 1, got ${JSON.stringify(fractions)}`,
    );
  }
  const limits = (raw['limits'] ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(limits)) {
    if (!(LIMIT_KEYS as readonly string[]).includes(k))
      throw new CodeConfigError(
        `code-v0 environment.config.limits.${k}: unknown limit; known: ${LIMIT_KEYS.join(', ')}`,
      );
    const bad = badLimitValue(v);
    if (bad) throw new CodeConfigError(`code-v0 environment.config.limits.${k}: ${bad}`);
  }
  const datasetsRaw = (raw['datasets'] ?? []) as unknown;
  if (!Array.isArray(datasetsRaw))
    throw new CodeConfigError('code-v0 environment.config.datasets: must be an array of { path, format, split, ... }');
  const datasets = datasetsRaw.map((d, i): DatasetSource => {
    const where = `code-v0 environment.config.datasets[${i}]`;
    if (typeof d !== 'object' || d === null || typeof (d as { path?: unknown }).path !== 'string')
      throw new CodeConfigError(`${where}.path: must be a string (a .jsonl or .parquet file)`);
    const src = d as Record<string, unknown>;
    const split = (src['split'] ?? 'hash') as DatasetSource['split'];
    if (!['hash', 'field', 'file', 'train', 'validation', 'test'].includes(split)) {
      throw new CodeConfigError(
        `${where}.split: must be hash, field, file, train, validation or test, got ${JSON.stringify(split)}`,
      );
    }
    if (split === 'file' && typeof src['splitFile'] !== 'string')
      throw new CodeConfigError(
        `${where}.splitFile: required (a JSON file {train: [ids], validation: [ids], test: [ids]}) when split is "file"`,
      );
    const format = (src['format'] ?? 'auto') as DatasetSource['format'];
    if (!['auto', 'troupe', 'apps', 'codecontests', 'livecodebench'].includes(format)) {
      throw new CodeConfigError(
        `${where}.format: must be auto, troupe, apps, codecontests or livecodebench, got ${JSON.stringify(format)}`,
      );
    }
    return {
      path: src['path'] as string,
      format,
      split,
      splitField: typeof src['splitField'] === 'string' ? src['splitField'] : 'split',
      ...(typeof src['splitFile'] === 'string' ? { splitFile: src['splitFile'] } : {}),
      requireReference: src['requireReference'] === undefined ? true : Boolean(src['requireReference']),
      ...(typeof src['limit'] === 'number' ? { limit: src['limit'] } : {}),
    };
  });
  return {
    seats: seats as CodeSeat[],
    maxTurns: (seats as unknown[]).length === 1 ? 1 : int('maxTurns', 3, 1)!,
    maxGoldenTests: int('maxGoldenTests', 4, 1, true),
    maxGoldenTestsEval: int('maxGoldenTestsEval', null, 1, true),
    maxTesterTests: int('maxTesterTests', 8, 1)!,
    maxShownFailures: int('maxShownFailures', 3, 0)!,
    discriminationWeight: weight,
    floatTolerance: tol as number | null,
    datasets,
    splitFractions: fractions,
    limits: limits as Partial<SandboxLimits>,
    sandbox: (raw['sandbox'] ?? {}) as CodeEnvConfig['sandbox'],
    cacheSize: int('cacheSize', 4096, 0)!,
  };
}
