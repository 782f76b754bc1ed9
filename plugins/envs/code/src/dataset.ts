/**
 * Assembles the problems of each split from the config: the shipped set (content-hash splits) or user files (hash,
 * field, split file, or a fixed split per file). Splits never share a problem: a problem whose content appears in two
 * splits is an error.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { canonicalJson, contentHash, SPLITS, splitOfContent, type Split } from '@troupe/kernel';
import type { CodeEnvConfig, DatasetSource } from './config.js';
import { DatasetError, loadProblemsFile, shippedProblems, splitFromName } from './loaders.js';
import type { CodeProblem } from './types.js';

/** Problems of every split, in a fixed order. */
export type ProblemsBySplit = Readonly<Record<Split, readonly CodeProblem[]>>;

/** The content key of a problem: a hash of its statement and golden tests (not of its id, file or split). */
export function problemKey(problem: Pick<CodeProblem, 'question' | 'tests'>): string {
  return contentHash({ question: problem.question, tests: problem.tests });
}

const cache = new Map<string, ProblemsBySplit>();

/**
 * The problems of each split for a config (memoised per dataset config).
 * @throws DatasetError for unreadable files, malformed rows, or a problem found in two splits
 */
export function problemsBySplit(config: Pick<CodeEnvConfig, 'datasets' | 'splitFractions'>): ProblemsBySplit {
  const cacheKey = canonicalJson({ datasets: config.datasets, fractions: config.splitFractions, cwd: process.cwd() });
  const hit = cache.get(cacheKey);
  if (hit) return hit;
  const out: Record<Split, CodeProblem[]> = { train: [], validation: [], test: [] };
  const seen = new Map<string, { split: Split; origin: string }>();
  const add = (problem: CodeProblem, split: Split): void => {
    const key = problemKey(problem);
    const prior = seen.get(key);
    if (prior) {
      if (prior.split !== split) {
        throw new DatasetError(
          `${problem.origin ?? problem.id}: the same problem (same statement and tests) is also in ${prior.origin} but in split ` +
            `${prior.split}, not ${split}; splits must not overlap`,
        );
      }
      return; // an exact duplicate within one split: keep the first
    }
    seen.set(key, { split, origin: problem.origin ?? problem.id });
    out[split].push(
      Object.freeze({ ...problem, tests: Object.freeze(problem.tests.map((t) => Object.freeze({ ...t }))), split }),
    );
  };
  if (config.datasets.length === 0) {
    for (const p of shippedProblems()) add(p, splitOfContent(problemKey(p), config.splitFractions));
  } else {
    for (const source of config.datasets) {
      for (const { problem, split } of assign(source, config)) add(problem, split);
    }
  }
  const result = Object.freeze({
    train: Object.freeze(out.train),
    validation: Object.freeze(out.validation),
    test: Object.freeze(out.test),
  });
  cache.set(cacheKey, result);
  return result;
}

function assign(
  source: DatasetSource,
  config: Pick<CodeEnvConfig, 'splitFractions'>,
): { problem: CodeProblem; split: Split }[] {
  const loaded = loadProblemsFile(source.path, {
    format: source.format,
    requireReference: source.requireReference,
    ...(source.limit !== undefined ? { limit: source.limit } : {}),
    ...(source.split === 'field' ? { splitField: source.splitField } : {}),
  });
  if (source.split === 'hash')
    return loaded.problems.map((problem) => ({
      problem,
      split: splitOfContent(problemKey(problem), config.splitFractions),
    }));
  if (source.split === 'field') return loaded.problems.map((problem) => ({ problem, split: problem.split! }));
  if (source.split === 'file') {
    const ids = readSplitFile(source.splitFile!);
    return loaded.problems.flatMap((problem) => {
      const split = ids.get(problem.id);
      return split ? [{ problem, split }] : [];
    });
  }
  return loaded.problems.map((problem) => ({ problem, split: source.split as Split }));
}

/**
 * Reads a split file `{ "train": [ids], "validation": [ids], "test": [ids] }` (`valid`, `val`, `dev` accepted).
 * @throws DatasetError naming the file and key
 */
export function readSplitFile(path: string): Map<string, Split> {
  const file = resolve(path);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new DatasetError(
      `${file}: cannot read split file (${(err as Error).message}); expected JSON {"train": [ids], "validation": [ids], "test": [ids]}`,
    );
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new DatasetError(
      `${file}: a split file must be a JSON object {"train": [ids], "validation": [ids], "test": [ids]}`,
    );
  }
  const map = new Map<string, Split>();
  for (const [name, ids] of Object.entries(data)) {
    const split = splitFromName(name);
    if (!split) throw new DatasetError(`${file}: key "${name}" is not a split; use ${SPLITS.join(', ')}`);
    if (!Array.isArray(ids)) throw new DatasetError(`${file}: key "${name}" must be a list of problem ids`);
    for (const id of ids) {
      const prior = map.get(String(id));
      if (prior && prior !== split)
        throw new DatasetError(`${file}: problem id ${String(id)} is listed in both ${prior} and ${split}`);
      map.set(String(id), split);
    }
  }
  return map;
}
