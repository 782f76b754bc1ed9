/**
 * Dataset loaders: the shipped problem set, and user-provided local JSONL or Parquet files in the Troupe, APPS,
 * CodeContests and LiveCodeBench formats. Loading is synchronous (environment creation is synchronous); Parquet files
 * are decoded by hyparquet in a short-lived child process.
 *
 * Every error a user can hit names the file, the line (JSONL) or row (Parquet), and the field.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import type { Split } from '@troupe/kernel';
import type { CodeProblem, IoTest } from './types.js';

/** Dataset formats the loaders understand. */
export type DatasetFormat = 'troupe' | 'apps' | 'codecontests' | 'livecodebench';

/** All dataset formats. */
export const DATASET_FORMATS: readonly DatasetFormat[] = ['troupe', 'apps', 'codecontests', 'livecodebench'];

/** A problem in a user file that is well-formed but unusable here (call-based, no tests, no Python reference...). */
export interface SkippedRow {
  /** `file:line` (JSONL) or `file row N` (Parquet). */
  readonly origin: string;
  /** Why it was skipped. */
  readonly reason: string;
}

/** Options of {@link loadProblemsFile}. */
export interface LoadOptions {
  /** The file format; `auto` (default) detects it from the first row's fields. */
  readonly format?: DatasetFormat | 'auto';
  /**
   * Skip problems without a reference solution (default true). The tester's reward needs the reference; set false to
   * keep them (the tester's reference pass rate is then 0 and the coder has no oracle).
   */
  readonly requireReference?: boolean;
  /** Keep at most this many problems (in file order). */
  readonly limit?: number;
  /** Read each problem's split from this field (values train / validation (or valid, val, dev) / test). */
  readonly splitField?: string;
}

/** What {@link loadProblemsFile} returns. */
export interface LoadResult {
  /** Absolute path of the file. */
  readonly file: string;
  /** The format used. */
  readonly format: DatasetFormat;
  /** The usable problems, in file order. */
  readonly problems: readonly CodeProblem[];
  /** Rows skipped, with the reason. */
  readonly skipped: readonly SkippedRow[];
}

/** An error in a user dataset, naming file, line or row, and field. */
export class DatasetError extends Error {
  override readonly name = 'DatasetError';
}

/** One raw row of a dataset file, with where it came from. */
export interface RawRow {
  /** The decoded row. */
  readonly row: unknown;
  /** `file:line` (JSONL) or `file row N` (Parquet). */
  readonly origin: string;
}

const PARQUET_SCRIPT = fileURLToPath(new URL('../src/parquet-rows.mjs', import.meta.url));

/**
 * Reads the rows of a `.jsonl` / `.ndjson` / `.json` (array) / `.parquet` file synchronously.
 * @throws DatasetError for a missing file, invalid JSON (with its line) or an unreadable Parquet file
 */
export function readRowsSync(path: string): RawRow[] {
  const file = resolve(path);
  const name = basename(file);
  try {
    statSync(file);
  } catch {
    throw new DatasetError(
      `${file}: dataset file not found (relative paths are resolved against the current directory ${process.cwd()})`,
    );
  }
  if (/\.parquet$/i.test(file)) {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-parquet-'));
    const out = join(dir, 'rows.jsonl');
    try {
      execFileSync(process.execPath, [PARQUET_SCRIPT, file, out], {
        stdio: ['ignore', 'ignore', 'pipe'],
        maxBuffer: 1 << 20,
      });
    } catch (err) {
      const stderr = String((err as { stderr?: Buffer }).stderr ?? '').trim();
      rmSync(dir, { recursive: true, force: true });
      throw new DatasetError(`${file}: cannot read Parquet file: ${stderr || (err as Error).message}`);
    }
    const text = readFileSync(out, 'utf8');
    rmSync(dir, { recursive: true, force: true });
    return text
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l, i) => ({ row: JSON.parse(l) as unknown, origin: `${name} row ${i + 1}` }));
  }
  const text = readFileSync(file, 'utf8');
  if (/\.json$/i.test(file) && text.trimStart().startsWith('[')) {
    let rows: unknown;
    try {
      rows = JSON.parse(text);
    } catch (err) {
      throw new DatasetError(`${file}: not valid JSON (${(err as Error).message})`);
    }
    return (rows as unknown[]).map((row, i) => ({ row, origin: `${name} item ${i + 1}` }));
  }
  if (!/\.(jsonl|ndjson|json)$/i.test(file)) {
    throw new DatasetError(`${file}: unsupported dataset file type; use .jsonl (one JSON object per line) or .parquet`);
  }
  const rows: RawRow[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    try {
      rows.push({ row: JSON.parse(line), origin: `${name}:${i + 1}` });
    } catch (err) {
      throw new DatasetError(`${file}:${i + 1}: not valid JSON (${(err as Error).message})`);
    }
  }
  return rows;
}

/** Detects a row's format from its fields. */
export function detectFormat(row: unknown, origin: string): DatasetFormat {
  if (!isRecord(row)) throw new DatasetError(`${origin}: expected a JSON object, got ${typeName(row)}`);
  if ('input_output' in row) return 'apps';
  if ('question_content' in row) return 'livecodebench';
  if ('description' in row && ('public_tests' in row || 'private_tests' in row || 'generated_tests' in row))
    return 'codecontests';
  if ('question' in row && 'tests' in row) return 'troupe';
  throw new DatasetError(
    `${origin}: cannot tell the dataset format from the fields [${Object.keys(row).join(', ')}]; expected APPS (question, ` +
      'input_output, solutions), CodeContests (description, public_tests/private_tests/generated_tests, solutions), ' +
      'LiveCodeBench (question_content, public_test_cases, private_test_cases) or Troupe (id, question, tests, reference); ' +
      'or set the format explicitly',
  );
}

/**
 * Loads a user dataset file.
 * @throws DatasetError naming file, line/row and field on malformed data, or when no usable problem remains
 */
export function loadProblemsFile(path: string, options: LoadOptions = {}): LoadResult {
  const file = resolve(path);
  const rows = readRowsSync(file);
  if (rows.length === 0) throw new DatasetError(`${file}: the file holds no rows`);
  const format =
    !options.format || options.format === 'auto' ? detectFormat(rows[0]!.row, rows[0]!.origin) : options.format;
  if (!DATASET_FORMATS.includes(format)) {
    throw new DatasetError(
      `${file}: unknown format "${String(format)}"; use one of auto, ${DATASET_FORMATS.join(', ')}`,
    );
  }
  const requireReference = options.requireReference ?? true;
  const problems: CodeProblem[] = [];
  const skipped: SkippedRow[] = [];
  for (const { row, origin } of rows) {
    if (options.limit !== undefined && problems.length >= options.limit) break;
    const parsed = problemFromRow(row, format, origin);
    if ('skip' in parsed) {
      skipped.push({ origin, reason: parsed.skip });
      continue;
    }
    let problem = parsed.problem;
    if (problem.reference === null && requireReference) {
      skipped.push({
        origin,
        reason: 'no reference solution (set requireReference: false to keep problems without one)',
      });
      continue;
    }
    if (options.splitField)
      problem = { ...problem, split: splitFromField(row as Record<string, unknown>, options.splitField, origin) };
    problems.push(problem);
  }
  if (problems.length === 0) {
    const reasons = new Map<string, number>();
    for (const s of skipped) reasons.set(s.reason, (reasons.get(s.reason) ?? 0) + 1);
    const summary = [...reasons].map(([reason, n]) => `${n} × ${reason}`).join('; ');
    throw new DatasetError(`${file}: no usable problem in ${rows.length} rows (format ${format}): ${summary}`);
  }
  return { file, format, problems, skipped };
}

/**
 * Converts one raw row to a problem, or says why it is skipped.
 * @throws DatasetError when a field is malformed
 */
export function problemFromRow(
  row: unknown,
  format: DatasetFormat,
  origin: string,
): { problem: CodeProblem } | { skip: string } {
  if (!isRecord(row)) throw new DatasetError(`${origin}: expected a JSON object, got ${typeName(row)}`);
  switch (format) {
    case 'troupe':
      return troupeRow(row, origin);
    case 'apps':
      return appsRow(row, origin);
    case 'codecontests':
      return codeContestsRow(row, origin);
    case 'livecodebench':
      return liveCodeBenchRow(row, origin);
  }
}

function troupeRow(row: Record<string, unknown>, origin: string): { problem: CodeProblem } {
  const question = requireString(row, 'question', origin);
  if (!Array.isArray(row['tests']) || row['tests'].length === 0) {
    throw new DatasetError(`${origin}: field "tests" must be a non-empty array of {input, output}`);
  }
  const tests = row['tests'].map((t, i) => {
    if (!isRecord(t) || typeof t['input'] !== 'string' || typeof t['output'] !== 'string') {
      throw new DatasetError(`${origin}: field "tests[${i}]" must be an object with string "input" and "output"`);
    }
    return { input: t['input'], output: t['output'] };
  });
  const reference = row['reference'] ?? null;
  if (reference !== null && typeof reference !== 'string')
    throw new DatasetError(`${origin}: field "reference" must be a string (Python source) or null`);
  const tolerance = row['tolerance'] ?? null;
  if (tolerance !== null && (typeof tolerance !== 'number' || !(tolerance >= 0))) {
    throw new DatasetError(`${origin}: field "tolerance" must be a non-negative number or null`);
  }
  const id = row['id'] === undefined ? origin : String(row['id']);
  return {
    problem: {
      id,
      question,
      tests,
      reference,
      tolerance,
      origin,
      ...(typeof row['split'] === 'string' ? { split: splitFromField(row, 'split', origin) } : {}),
    },
  };
}

function appsRow(row: Record<string, unknown>, origin: string): { problem: CodeProblem } | { skip: string } {
  const question = requireString(row, 'question', origin);
  const io = jsonField(row, 'input_output', origin);
  if (io === null || io === '' || (isRecord(io) && Object.keys(io).length === 0))
    return { skip: 'no tests (empty input_output)' };
  if (!isRecord(io))
    throw new DatasetError(
      `${origin}: field "input_output" must be a JSON object {inputs, outputs}, got ${typeName(io)}`,
    );
  if (io['fn_name'] !== undefined)
    return { skip: `call-based problem (fn_name ${String(io['fn_name'])}) is not stdin/stdout` };
  const inputs = io['inputs'];
  const outputs = io['outputs'];
  if (!Array.isArray(inputs) || !Array.isArray(outputs)) {
    throw new DatasetError(`${origin}: field "input_output" must hold arrays "inputs" and "outputs"`);
  }
  if (inputs.length !== outputs.length) {
    throw new DatasetError(`${origin}: field "input_output" has ${inputs.length} inputs but ${outputs.length} outputs`);
  }
  if (inputs.length === 0) return { skip: 'no tests (empty input_output.inputs)' };
  const tests = inputs.map((input, i) => ({
    input: ioText(input, `${origin}: field "input_output.inputs[${i}]"`),
    output: ioText(outputs[i], `${origin}: field "input_output.outputs[${i}]"`),
  }));
  const solutions =
    row['solutions'] === undefined || row['solutions'] === '' ? [] : jsonField(row, 'solutions', origin);
  if (!Array.isArray(solutions))
    throw new DatasetError(`${origin}: field "solutions" must be a JSON list of Python sources`);
  const reference = solutions.find((s): s is string => typeof s === 'string' && s.trim() !== '') ?? null;
  const id = String(row['problem_id'] ?? row['id'] ?? origin);
  return { problem: { id, question, tests, reference, tolerance: null, origin } };
}

/** CodeContests language codes (its `Language` enum): 3 = PYTHON3. */
const CODECONTESTS_PYTHON3 = 3;

function codeContestsRow(row: Record<string, unknown>, origin: string): { problem: CodeProblem } | { skip: string } {
  const question = requireString(row, 'description', origin);
  const tests: IoTest[] = [];
  for (const field of ['public_tests', 'private_tests', 'generated_tests']) {
    if (row[field] === undefined || row[field] === null) continue;
    const group = typeof row[field] === 'string' ? jsonField(row, field, origin) : row[field];
    if (!isRecord(group) || !Array.isArray(group['input']) || !Array.isArray(group['output'])) {
      throw new DatasetError(`${origin}: field "${field}" must be an object {input: string[], output: string[]}`);
    }
    const inputs = group['input'];
    const outputs = group['output'];
    if (inputs.length !== outputs.length) {
      throw new DatasetError(`${origin}: field "${field}" has ${inputs.length} inputs but ${outputs.length} outputs`);
    }
    inputs.forEach((input, i) =>
      tests.push({
        input: ioText(input, `${origin}: field "${field}.input[${i}]"`),
        output: ioText(outputs[i], `${origin}: field "${field}.output[${i}]"`),
      }),
    );
  }
  if (tests.length === 0) return { skip: 'no tests' };
  let reference: string | null = null;
  const solutions = typeof row['solutions'] === 'string' ? jsonField(row, 'solutions', origin) : row['solutions'];
  if (solutions !== undefined && solutions !== null) {
    if (!isRecord(solutions) || !Array.isArray(solutions['language']) || !Array.isArray(solutions['solution'])) {
      throw new DatasetError(`${origin}: field "solutions" must be an object {language: number[], solution: string[]}`);
    }
    const languages = solutions['language'];
    const sources = solutions['solution'];
    for (let i = 0; i < languages.length; i++) {
      const lang = languages[i];
      const isPython3 = lang === CODECONTESTS_PYTHON3 || (typeof lang === 'string' && /^python ?3$/i.test(lang.trim()));
      if (isPython3 && typeof sources[i] === 'string' && (sources[i] as string).trim() !== '') {
        reference = sources[i] as string;
        break;
      }
    }
  }
  const id = String(row['name'] ?? row['id'] ?? origin);
  return { problem: { id, question, tests, reference, tolerance: null, origin } };
}

function liveCodeBenchRow(row: Record<string, unknown>, origin: string): { problem: CodeProblem } | { skip: string } {
  const question = requireString(row, 'question_content', origin);
  const cases: Record<string, unknown>[] = [];
  for (const field of ['public_test_cases', 'private_test_cases']) {
    const value = row[field];
    if (value === undefined || value === null || value === '') continue;
    const list = typeof value === 'string' ? decodeLcbTestCases(value, `${origin}: field "${field}"`) : value;
    if (!Array.isArray(list))
      throw new DatasetError(`${origin}: field "${field}" must be a JSON list of {input, output, testtype}`);
    list.forEach((c, i) => {
      if (!isRecord(c))
        throw new DatasetError(`${origin}: field "${field}[${i}]" must be an object {input, output, testtype}`);
      cases.push(c);
    });
  }
  if (cases.length === 0) return { skip: 'no tests' };
  if (cases.some((c) => c['testtype'] !== undefined && c['testtype'] !== 'stdin')) {
    return { skip: 'functional (call-based) problem is not stdin/stdout' };
  }
  const tests = cases.map((c, i) => ({
    input: ioText(c['input'], `${origin}: test case ${i} field "input"`),
    output: ioText(c['output'], `${origin}: test case ${i} field "output"`),
  }));
  const ref = row['reference'] ?? row['solution'] ?? null;
  const reference = typeof ref === 'string' && ref.trim() !== '' ? ref : null;
  const id = String(row['question_id'] ?? row['question_title'] ?? origin);
  return { problem: { id, question, tests, reference, tolerance: null, origin } };
}

/**
 * Decodes a LiveCodeBench test-case string: plain JSON, or (as in the released `private_test_cases`) base64 of
 * zlib-compressed pickled JSON text.
 * @throws DatasetError when neither decoding works
 */
export function decodeLcbTestCases(text: string, where: string): unknown {
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    try {
      return JSON.parse(trimmed);
    } catch (err) {
      throw new DatasetError(`${where}: not valid JSON (${(err as Error).message})`);
    }
  }
  let inner: string;
  try {
    inner = unpickleString(inflateSync(Buffer.from(trimmed, 'base64')));
  } catch (err) {
    throw new DatasetError(`${where}: neither JSON nor base64(zlib(pickle(JSON))) (${(err as Error).message})`);
  }
  try {
    return JSON.parse(inner);
  } catch (err) {
    throw new DatasetError(`${where}: the decompressed test cases are not valid JSON (${(err as Error).message})`);
  }
}

/** Reads the single `str` of a pickle (protocols 2–5): enough for LiveCodeBench's compressed test cases. */
function unpickleString(bytes: Buffer): string {
  let i = 0;
  while (i < bytes.length) {
    const op = bytes[i++]!;
    switch (op) {
      case 0x80:
        i += 1;
        break; // PROTO n
      case 0x95:
        i += 8;
        break; // FRAME len8
      case 0x94:
        break; // MEMOIZE
      case 0x8c: {
        const n = bytes[i]!;
        return bytes.subarray(i + 1, i + 1 + n).toString('utf8');
      } // SHORT_BINUNICODE
      case 0x58: {
        const n = bytes.readUInt32LE(i);
        return bytes.subarray(i + 4, i + 4 + n).toString('utf8');
      } // BINUNICODE
      case 0x8d: {
        const n = Number(bytes.readBigUInt64LE(i));
        return bytes.subarray(i + 8, i + 8 + n).toString('utf8');
      } // BINUNICODE8
      default:
        throw new Error(`unsupported pickle opcode 0x${op.toString(16)} at byte ${i - 1}`);
    }
  }
  throw new Error('no string in pickle');
}

/** Maps a split name from a dataset to a split. */
export function splitFromName(value: unknown): Split | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim().toLowerCase();
  if (v === 'train' || v === 'training') return 'train';
  if (v === 'validation' || v === 'valid' || v === 'val' || v === 'dev') return 'validation';
  if (v === 'test' || v === 'testing') return 'test';
  return undefined;
}

function splitFromField(row: Record<string, unknown>, field: string, origin: string): Split {
  const split = splitFromName(row[field]);
  if (!split) {
    throw new DatasetError(
      `${origin}: field "${field}" must be one of train, validation (valid, val, dev), test; got ${JSON.stringify(row[field])}`,
    );
  }
  return split;
}

function requireString(row: Record<string, unknown>, field: string, origin: string): string {
  const value = row[field];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new DatasetError(`${origin}: field "${field}" must be a non-empty string, got ${typeName(value)}`);
  }
  return value;
}

function jsonField(row: Record<string, unknown>, field: string, origin: string): unknown {
  const value = row[field];
  if (typeof value !== 'string') return value ?? null;
  if (value.trim() === '') return '';
  try {
    return JSON.parse(value);
  } catch (err) {
    throw new DatasetError(`${origin}: field "${field}" is not valid JSON (${(err as Error).message})`);
  }
}

/** A test input/output: a string, a list of lines (joined with newlines), or a number. */
function ioText(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number'))
    return value.join('\n');
  throw new DatasetError(`${where} must be a string (or a list of lines), got ${typeName(value)}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? (value === '' ? 'an empty string' : 'a string') : `a ${typeof value}`;
}

/** Path of the shipped problem set. */
export const SHIPPED_PROBLEMS_PATH = fileURLToPath(new URL('../data/problems.jsonl', import.meta.url));

let shipped: readonly CodeProblem[] | undefined;

/** The problem set the project writes itself (data/problems.jsonl), loaded once. */
export function shippedProblems(): readonly CodeProblem[] {
  shipped ??= loadProblemsFile(SHIPPED_PROBLEMS_PATH, { format: 'troupe' }).problems.map((p) => ({
    ...p,
    origin: `data/problems.jsonl#${p.id}`,
  }));
  return shipped;
}
