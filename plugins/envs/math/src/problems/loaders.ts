/**
 * Loaders for local problem files: JSONL (one JSON object per line) and Parquet (read with hyparquet), in the
 * GSM8K (`question`, `answer` ending in `#### N`), AIME (`problem`, `answer`), Polaris (`problem`, `answer`), MATH
 * (`problem`, `solution` with a `\boxed{}`) and OlympiadBench (`question`, `final_answer` list, optional `unit`)
 * formats, with a field-mapping option. Errors name the file, the
 * line (or row) and the missing field.
 */
import { readFileSync, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { extname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractLastBoxed } from '../checker/extract.js';
import { extractReference, gsm8kFinalAnswer } from '../checker/response.js';
import type { MathProblem } from './types.js';

/** Known file formats. `auto` decides per row from the fields present. */
export type DatasetFormat = 'auto' | 'gsm8k' | 'aime' | 'polaris' | 'math' | 'olympiadbench';

/** How to read one dataset file. */
export interface DatasetOptions {
  /** Path of a `.jsonl` / `.json` (JSON lines, or one JSON array of objects) or `.parquet` file. */
  readonly path: string;
  /** The format (default `auto`). */
  readonly format?: DatasetFormat;
  /** Field names to use instead of the format's (`{ question: 'prompt', answer: 'target' }`). */
  readonly fields?: { readonly question?: string; readonly answer?: string };
  /** Directory to resolve a relative `path` against (default: the current directory). */
  readonly baseDir?: string;
  /** At most this many rows (default: all). */
  readonly limit?: number;
}

/** A user-facing error about a dataset file. */
export class MathDatasetError extends Error {
  override readonly name = 'MathDatasetError';
}

/** The default question and answer fields of each format. */
const FORMAT_FIELDS: Readonly<Record<Exclude<DatasetFormat, 'auto'>, { question: string; answer: string }>> = {
  gsm8k: { question: 'question', answer: 'answer' },
  aime: { question: 'problem', answer: 'answer' },
  polaris: { question: 'problem', answer: 'answer' },
  math: { question: 'problem', answer: 'solution' },
  olympiadbench: { question: 'question', answer: 'final_answer' },
};

export { gsm8kFinalAnswer };

/** Decides the format of one row for `auto`. */
function detectFormat(row: Record<string, unknown>): Exclude<DatasetFormat, 'auto'> | undefined {
  if ('final_answer' in row) return 'olympiadbench';
  if ('question' in row && typeof row.answer === 'string' && row.answer.includes('####')) return 'gsm8k';
  if ('problem' in row && 'answer' in row) return 'polaris';
  if ('problem' in row && 'solution' in row) return 'math';
  if ('question' in row && 'answer' in row) return 'aime';
  return undefined;
}

/** Converts one raw row into a problem, or throws a {@link MathDatasetError} naming `where`. */
export function rowToProblem(row: unknown, options: DatasetOptions, where: string): MathProblem {
  if (!row || typeof row !== 'object' || Array.isArray(row))
    throw new MathDatasetError(`${where}: expected a JSON object, got ${JSON.stringify(row)?.slice(0, 60)}`);
  const record = row as Record<string, unknown>;
  const requested = options.format ?? 'auto';
  const format = requested === 'auto' ? (detectFormat(record) ?? (options.fields ? 'polaris' : undefined)) : requested;
  if (!format) {
    throw new MathDatasetError(
      `${where}: cannot tell the format from the fields ${JSON.stringify(Object.keys(record))}; ` +
        'expected question/answer (GSM8K), problem/answer (AIME, Polaris), problem/solution (MATH) or question/final_answer (OlympiadBench); ' +
        'set dataset.format or dataset.fields',
    );
  }
  const questionField = options.fields?.question ?? FORMAT_FIELDS[format].question;
  const answerField = options.fields?.answer ?? FORMAT_FIELDS[format].answer;
  const missing = (field: string, role: string): MathDatasetError =>
    new MathDatasetError(
      `${where}: missing field "${field}" (the ${role}; format ${format}; fields present: ${Object.keys(record).join(', ') || 'none'}). ` +
        `Map another field with dataset.fields.${role === 'question' ? 'question' : 'answer'}.`,
    );
  const q = record[questionField];
  if (q === undefined || q === null || String(q).trim() === '') throw missing(questionField, 'question');
  const a = record[answerField];
  if (a === undefined || a === null || String(a).trim() === '') throw missing(answerField, 'answer');
  // A list of answers (OlympiadBench's final_answer, or any format's answer field) is read by extractReference.
  let answer = Array.isArray(a)
    ? extractReference(a)
    : typeof a === 'string'
      ? a
      : typeof a === 'bigint'
        ? a.toString()
        : typeof a === 'number'
          ? String(a)
          : JSON.stringify(a);
  if (Array.isArray(a) && answer === '')
    throw new MathDatasetError(`${where}: field "${answerField}" holds no answer (a list such as ["$4$"])`);
  let unit: string | undefined;
  if (format === 'olympiadbench') {
    answer = extractReference(answer);
    if (answer === '')
      throw new MathDatasetError(
        `${where}: field "${answerField}" holds no answer (OlympiadBench format: a list such as ["$4$"])`,
      );
    const u = record.unit;
    if (typeof u === 'string' && u.trim() !== '') unit = u.trim();
  } else if (Array.isArray(a)) {
    // A list is its answers already; the text formats below read a final answer out of a solution.
  } else if (format === 'gsm8k') {
    const final = gsm8kFinalAnswer(answer);
    if (final === undefined)
      throw new MathDatasetError(`${where}: field "${answerField}" has no "#### <final answer>" line (GSM8K format)`);
    answer = final;
  } else if (format === 'math') {
    const boxed = extractLastBoxed(answer);
    if (boxed === undefined)
      throw new MathDatasetError(`${where}: field "${answerField}" has no \\boxed{} final answer (MATH format)`);
    answer = boxed;
  }
  return {
    question: String(q).trim(),
    answer: answer.trim(),
    source: format,
    origin: where,
    ...(unit ? { unit } : {}),
  };
}

/**
 * Parses JSON-lines text (blank lines skipped), or a JSON array of objects when the text starts with `[`.
 * `file` is used in errors (`file:line` for JSON lines, `file[index]` for an array).
 */
export function parseJsonl(text: string, options: DatasetOptions, file: string): MathProblem[] {
  const out: MathProblem[] = [];
  if (text.trimStart().startsWith('[')) {
    let rows: unknown;
    try {
      rows = JSON.parse(text);
    } catch (err) {
      throw new MathDatasetError(`${file}: invalid JSON array (${err instanceof Error ? err.message : String(err)})`);
    }
    for (const [k, row] of (rows as unknown[]).entries()) {
      out.push(rowToProblem(row, options, `${file}[${k}]`));
      if (options.limit !== undefined && out.length >= options.limit) break;
    }
    return out;
  }
  const lines = text.split(/\r?\n/);
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!.trim();
    if (line === '') continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (err) {
      throw new MathDatasetError(
        `${file}:${k + 1}: invalid JSON (${err instanceof Error ? err.message : String(err)})`,
      );
    }
    out.push(rowToProblem(row, options, `${file}:${k + 1}`));
    if (options.limit !== undefined && out.length >= options.limit) break;
  }
  return out;
}

/** Rows of a Parquet file as plain objects (BigInt kept as BigInt). */
export async function readParquetRows(path: string): Promise<Record<string, unknown>[]> {
  const { parquetReadObjects } = await import('hyparquet');
  const bytes = await readFile(path);
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return (await parquetReadObjects({ file })) as Record<string, unknown>[];
}

/** The program that reads a Parquet file in a child process and prints its rows as JSON (for the sync loader). */
const PARQUET_CHILD = `
const [path] = process.argv.slice(1);
const { parquetReadObjects } = await import('hyparquet');
const { readFile } = await import('node:fs/promises');
const bytes = await readFile(path);
const rows = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) });
process.stdout.write(JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
`;

/**
 * Rows of a Parquet file, read SYNCHRONOUSLY (the environment contract's `create` and `instance` are synchronous;
 * hyparquet is async-only, so a short-lived child Node process reads the file). BigInts arrive as strings.
 */
export function readParquetRowsSync(path: string): Record<string, unknown>[] {
  // The child resolves hyparquet from this package's directory (its dependency), like this module would.
  const packageDir = fileURLToPath(new URL('../..', import.meta.url));
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', PARQUET_CHILD, resolve(path)], {
    cwd: packageDir,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  if (run.error || run.status !== 0) {
    const why =
      run.error?.message ??
      run.stderr
        .trim()
        .split('\n')
        .filter((l) => /Error/.test(l))
        .pop() ??
      run.stderr.trim();
    throw new MathDatasetError(`${path}: could not read the Parquet file (${why})`);
  }
  return JSON.parse(run.stdout) as Record<string, unknown>[];
}

/** Converts Parquet rows to problems (`file#row` in errors, rows counted from 1). */
function parquetToProblems(
  rows: readonly Record<string, unknown>[],
  options: DatasetOptions,
  file: string,
): MathProblem[] {
  const out: MathProblem[] = [];
  for (let k = 0; k < rows.length; k++) {
    out.push(rowToProblem(rows[k], options, `${file} row ${k + 1}`));
    if (options.limit !== undefined && out.length >= options.limit) break;
  }
  return out;
}

/** Resolves the dataset path and checks that the file exists. */
function locate(options: DatasetOptions): string {
  const file = resolve(options.baseDir ?? process.cwd(), options.path);
  if (!existsSync(file))
    throw new MathDatasetError(`${file}: dataset file not found (environment.config.dataset.path)`);
  return file;
}

/** Whether a path names a Parquet file. */
function isParquet(file: string): boolean {
  return extname(file).toLowerCase() === '.parquet';
}

/** Loads a dataset file synchronously (JSONL directly, Parquet through a child process). */
export function loadDatasetSync(options: DatasetOptions): MathProblem[] {
  const file = locate(options);
  const problems = isParquet(file)
    ? parquetToProblems(readParquetRowsSync(file), options, file)
    : parseJsonl(readFileSync(file, 'utf8'), options, file);
  if (problems.length === 0) throw new MathDatasetError(`${file}: the dataset has no rows`);
  return problems;
}

/** Loads a dataset file asynchronously (in-process for Parquet). */
export async function loadDataset(options: DatasetOptions): Promise<MathProblem[]> {
  const file = locate(options);
  const problems = isParquet(file)
    ? parquetToProblems(await readParquetRows(file), options, file)
    : parseJsonl(await readFile(file, 'utf8'), options, file);
  if (problems.length === 0) throw new MathDatasetError(`${file}: the dataset has no rows`);
  return problems;
}
