/**
 * `sudoku-filler-v0`: a role whose seat states Sudoku cell fills `#### [[row,col,value],...]` (the action type
 * `sudoku-fills`) or, when its seat must produce `sudoku-grid` (environment `action: grid`), the completed grid
 * `#### 1234 .... ....` written row by row. Contributed by this package next to the environment: no other role
 * produces these action types.
 */
import type { RoleContribution, SeatContext } from '@troupe/kernel';
import { injectable, readConfigSchema } from '@troupe/kernel';
import type { AnswerRoleConfig } from '@troupe/game-kit';
import {
  AnswerLineRole,
  answerMismatch,
  findAnswerLine,
  quoteExcerpt as quote,
  readAnswerRoleConfig,
  roleConfigReader,
  schemaDefaults,
} from '@troupe/game-kit';
import type { Fill, GridAnswer, SudokuAction } from './environment.js';
import { SUDOKU_FILLS, SUDOKU_GRID } from './environment.js';
import { formatFills, formatGridLine } from './grid.js';

/** The contribution id. */
export const SUDOKU_FILLER_ID = 'sudoku-filler-v0';

/** The validated config of the filler role: the answer-line role's keys (`systemPrompt`: `{seat}`, `{size}` substituted) and the size. */
export interface SudokuFillerConfig extends AnswerRoleConfig {
  /** Grid size (4 or 9): bounds the grammar's digits and the number of fills. Default 4. */
  readonly size: 4 | 9;
}

/** The config schema file, read once; it states the defaults. */
export const SUDOKU_FILLER_CONFIG_SCHEMA = readConfigSchema(
  new URL('../schemas/sudoku-filler.config.json', import.meta.url),
);

/** What a well-formed answer looks like, quoted in every parse error. */
export const SUDOKU_FILLER_FORMAT = '#### [[row,col,value],...]';

/** What a well-formed grid answer looks like for a grid size, quoted in every parse error. */
export function gridAnswerFormat(size: number): string {
  return `#### ${Array.from({ length: size }, (_, r) => `<row ${r + 1}>`).join(' ')} (each row its ${size} digits)`;
}

/** Most fills the parser reads (the environment rejects more than size² anyway). */
export const MAX_PARSED_FILLS = 1000;

/**
 * The built-in system prompt. Its example is two fills, NOT a grid: a prompt must never show a complete valid grid
 * (the official prompt's example grid was itself a valid Sudoku that 'solved' every puzzle).
 */
export const SUDOKU_FILLER_SYSTEM_PROMPT = [
  'You are the {seat} of a team that solves a {size}x{size} Sudoku by stating cell fills.',
  'Read the task and the current grid, then answer. End your reply with one final line of the form',
  '#### [[row,col,value],[row,col,value]]',
  'for example "#### [[1,2,3],[4,1,2]]" puts 3 in row 1, column 2 and 2 in row 4, column 1.',
  'Rows and columns are numbered from 1; values are 1 to {size}. Never change a given clue.',
  'The last line that starts with #### is your answer; write nothing after it.',
].join('\n');

function resolveConfig(raw: Record<string, unknown>): SudokuFillerConfig {
  const r = roleConfigReader(SUDOKU_FILLER_ID, schemaDefaults(SUDOKU_FILLER_CONFIG_SCHEMA), raw);
  return Object.freeze({ size: r.oneOf('size', [4, 9] as const), ...readAnswerRoleConfig(r) });
}

/**
 * The system prompt of a seat that answers with the completed grid. It describes the format in words: a prompt must
 * never show a complete valid grid.
 */
export const SUDOKU_GRID_SYSTEM_PROMPT = [
  'You are the {seat} of a team that solves a {size}x{size} Sudoku by writing the completed grid.',
  'Read the task and the current grid, then answer. End your reply with one final line: "####", then the {size} rows',
  'of the completed grid from top to bottom, separated by single spaces, each row written as its {size} digits.',
  'Keep every given clue. The last line that starts with #### is your answer; write nothing after it.',
].join('\n');

/** The result of {@link parseGridAnswer}. */
export type ParsedGrid =
  { readonly ok: true; readonly grid: number[][] } | { readonly ok: false; readonly error: string };

/**
 * Parses a grid answer: the LAST line starting with `####` must hold exactly `size` groups of `size` digits separated
 * by spaces. Digits are NOT range-checked here: the environment rejects a 0 or a digit above size (a rule error,
 * which costs less than unparseable text). Never throws.
 */
export function parseGridAnswer(text: string, size: number): ParsedGrid {
  const format = gridAnswerFormat(size);
  const found = findAnswerLine(text, format);
  if (!found.ok) return found;
  const body = found.line.slice(4).trim();
  const rows = body === '' ? [] : body.split(/\s+/);
  if (rows.length !== size)
    return answerMismatch(format, `${rows.length} row${rows.length === 1 ? '' : 's'} in ${quote(found.line)}`);
  const bad = rows.findIndex((row) => !/^\d+$/.test(row) || row.length !== size);
  if (bad >= 0) return answerMismatch(format, `row ${bad + 1} ${quote(rows[bad]!)}`);
  return { ok: true, grid: rows.map((row) => [...row].map(Number)) };
}

/** The result of {@link parseFills}. */
export type ParsedFills =
  { readonly ok: true; readonly fills: Fill[] } | { readonly ok: false; readonly error: string };

/**
 * Parses a filler answer: the LAST line starting with `####` must be `#### [[r,c,v],...]` (spaces allowed; each
 * number a non-negative integer of at most 3 digits). Ranges are NOT checked here: the environment rejects a list
 * with a number outside 1..size (an invalid action, which costs less than unparseable text). Never throws.
 */
export function parseFills(text: string): ParsedFills {
  const found = findAnswerLine(text, SUDOKU_FILLER_FORMAT);
  if (!found.ok) return found;
  const expected = (what: string): ParsedFills => answerMismatch(SUDOKU_FILLER_FORMAT, what);
  const line = found.line;
  const rest = line.slice(4).trim();
  if (!/^\[[\d\s,[\]]*\]$/.test(rest)) return expected(quote(line));
  const inner = rest.slice(1, -1).trim();
  if (inner === '') return { ok: true, fills: [] };
  const fills: Fill[] = [];
  const re = /\s*\[\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\]\s*(,|$)/y;
  let at = 0;
  while (at < inner.length) {
    re.lastIndex = at;
    const m = re.exec(inner);
    if (!m) return expected(`${quote(inner.slice(at))} as fill ${fills.length + 1} (each fill is [row,col,value])`);
    fills.push([Number(m[1]), Number(m[2]), Number(m[3])]);
    if (fills.length > MAX_PARSED_FILLS) return { ok: false, error: `more than ${MAX_PARSED_FILLS} fills` };
    at = re.lastIndex;
    if (m[4] === ',' && at >= inner.length) return expected('a trailing comma');
  }
  return { ok: true, fills };
}

/** The canonical text of a fill list: `#### [[1,2,3],[4,1,2]]`. */
export function renderFills(fills: readonly (readonly number[])[]): string {
  return `#### ${formatFills(fills)}`;
}

/** The canonical text of a grid answer: `#### 1234 3412 ...` (one group of digits per row). */
export function renderGridAnswer(grid: GridAnswer): string {
  return `#### ${formatGridLine(grid)}`;
}

/** The regex (whole completion) of a canonical grid answer: size groups of size digits 1..size. */
export function gridAnswerPattern(size: number): string {
  const row = `[1-${size}]{${size}}`;
  return `#### ${row}(?: ${row}){${size - 1}}`;
}

/** The regex (whole completion) of a canonical answer for a grid size: at most size² fills of digits 1..size. */
export function fillsPattern(size: number): string {
  const d = `[1-${size}]`;
  const fill = `\\[${d},${d},${d}\\]`;
  return `#### \\[(?:${fill}(?:,${fill}){0,${size * size - 1}})?\\]`;
}

/** The filler role for one config: a `sudoku-grid` seat answers with the grid, any other with fills. */
export class SudokuFillerRole extends AnswerLineRole<SudokuAction, SudokuFillerConfig> {
  /** Builds the role; `config` is filled with defaults and checked. */
  constructor(config: Record<string, unknown> = {}) {
    super(SUDOKU_FILLER_ID, Object.freeze([SUDOKU_FILLS, SUDOKU_GRID]), resolveConfig(config));
  }

  protected builtInPrompt(seat: SeatContext): string {
    return seat.actionType === SUDOKU_GRID ? SUDOKU_GRID_SYSTEM_PROMPT : SUDOKU_FILLER_SYSTEM_PROMPT;
  }

  protected substitutions(): Record<string, number> {
    return { size: this.config.size };
  }

  protected format(seat: SeatContext): string {
    return seat.actionType === SUDOKU_GRID ? gridAnswerFormat(this.config.size) : SUDOKU_FILLER_FORMAT;
  }

  protected read(text: string, seat: SeatContext): { ok: true; action: SudokuAction } | { ok: false; error: string } {
    const parsed = seat.actionType === SUDOKU_GRID ? parseGridAnswer(text, this.config.size) : parseFills(text);
    return parsed.ok ? { ok: true, action: 'grid' in parsed ? parsed.grid : parsed.fills } : parsed;
  }

  /** {@inheritDoc Role.render} */
  render(action: SudokuAction, seat: SeatContext): string {
    return seat.actionType === SUDOKU_GRID
      ? renderGridAnswer(action as GridAnswer)
      : renderFills(action as readonly Fill[]);
  }

  /**
   * Fills: `#### \[(?:F(?:,F){0,size²-1})?\]` with F = `\[[1-size],[1-size],[1-size]\]`; grid: `#### R(?: R){size-1}`
   * with R = `[1-size]{size}`.
   */
  protected pattern(seat: SeatContext): string {
    return seat.actionType === SUDOKU_GRID ? gridAnswerPattern(this.config.size) : fillsPattern(this.config.size);
  }
}

/** The `sudoku-filler-v0` contribution. */
@injectable()
export class SudokuFillerContribution implements RoleContribution {
  readonly id = SUDOKU_FILLER_ID;
  readonly description =
    'Sudoku filler: states cell fills as `#### [[row,col,value],...]`, or the completed grid as `#### 1234 ....` row by row';
  readonly produces = Object.freeze([SUDOKU_FILLS, SUDOKU_GRID]);
  readonly configSchema = SUDOKU_FILLER_CONFIG_SCHEMA;
  create(config: Record<string, unknown>): SudokuFillerRole {
    return new SudokuFillerRole(config);
  }
}
