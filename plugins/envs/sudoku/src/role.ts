/**
 * `sudoku-filler-v0`: a role whose seat states Sudoku cell fills `#### [[row,col,value],...]` (the action type
 * `sudoku-fills`). Contributed by this package next to the environment: no other role produces `sudoku-fills`.
 */
import { readFileSync } from 'node:fs';
import type { ChatMessage, JsonSchema, Move, Observation, OutputGrammar, Role, RoleContribution, SeatContext } from '@troupe/kernel';
import type { Fill } from './environment.js';
import { SUDOKU_FILLS } from './environment.js';
import { formatFills } from './grid.js';

/** The contribution id. */
export const SUDOKU_FILLER_ID = 'sudoku-filler-v0';

/** The validated config of the filler role. */
export interface SudokuFillerConfig {
  /** Grid size (4 or 9): bounds the grammar's digits and the number of fills. Default 4. */
  readonly size: 4 | 9;
  /** Include the task statement in the user message. Default true. */
  readonly includeTask: boolean;
  /** Replacement system prompt (`{seat}`, `{size}` substituted). */
  readonly systemPrompt?: string;
}

/** The default config. */
export const DEFAULT_SUDOKU_FILLER_CONFIG: SudokuFillerConfig = Object.freeze({ size: 4, includeTask: true });

/** What a well-formed answer looks like, quoted in every parse error. */
export const SUDOKU_FILLER_FORMAT = '#### [[row,col,value],...]';

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

function quote(text: string, max = 40): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

function resolveConfig(raw: Record<string, unknown>): SudokuFillerConfig {
  const known = ['size', 'includeTask', 'systemPrompt'];
  for (const key of Object.keys(raw)) {
    if (!known.includes(key)) throw new Error(`${SUDOKU_FILLER_ID}: roleConfig.${key} is not a known key; known keys: ${known.join(', ')}`);
  }
  const c = { ...DEFAULT_SUDOKU_FILLER_CONFIG, ...raw } as Record<string, unknown>;
  if (c.size !== 4 && c.size !== 9) throw new Error(`${SUDOKU_FILLER_ID}: roleConfig.size must be 4 or 9, got ${JSON.stringify(c.size)}`);
  if (typeof c.includeTask !== 'boolean') throw new Error(`${SUDOKU_FILLER_ID}: roleConfig.includeTask must be a boolean, got ${JSON.stringify(c.includeTask)}`);
  if (c.systemPrompt !== undefined && typeof c.systemPrompt !== 'string') {
    throw new Error(`${SUDOKU_FILLER_ID}: roleConfig.systemPrompt must be a string, got ${JSON.stringify(c.systemPrompt)}`);
  }
  return Object.freeze({ size: c.size as 4 | 9, includeTask: c.includeTask, ...(c.systemPrompt === undefined ? {} : { systemPrompt: c.systemPrompt as string }) });
}

/** The result of {@link parseFills}. */
export type ParsedFills = { readonly ok: true; readonly fills: Fill[] } | { readonly ok: false; readonly error: string };

/**
 * Parses a filler answer: the LAST line starting with `####` must be `#### [[r,c,v],...]` (spaces allowed; each
 * number a non-negative integer of at most 3 digits). Ranges are NOT checked here: the environment rejects a list
 * with a number outside 1..size (an invalid action, which costs less than unparseable text). Never throws.
 */
export function parseFills(text: string): ParsedFills {
  const s = typeof text === 'string' ? text : String(text);
  const lines = s.split(/\r?\n/);
  let line: string | undefined;
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!.trim();
    if (l.startsWith('####')) { line = l; break; }
  }
  if (line === undefined) {
    const last = lines.map((l) => l.trim()).filter((l) => l.length > 0).at(-1);
    return { ok: false, error: `expected "${SUDOKU_FILLER_FORMAT}", found ${last === undefined ? 'an empty answer' : `no "####" line (last line ${quote(last)})`}` };
  }
  const rest = line.slice(4).trim();
  if (!/^\[[\d\s,[\]]*\]$/.test(rest)) return { ok: false, error: `expected "${SUDOKU_FILLER_FORMAT}", found ${quote(line)}` };
  const inner = rest.slice(1, -1).trim();
  if (inner === '') return { ok: true, fills: [] };
  const fills: Fill[] = [];
  const re = /\s*\[\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\]\s*(,|$)/y;
  let at = 0;
  while (at < inner.length) {
    re.lastIndex = at;
    const m = re.exec(inner);
    if (!m) return { ok: false, error: `expected "${SUDOKU_FILLER_FORMAT}", found ${quote(inner.slice(at))} as fill ${fills.length + 1} (each fill is [row,col,value])` };
    fills.push([Number(m[1]), Number(m[2]), Number(m[3])]);
    if (fills.length > MAX_PARSED_FILLS) return { ok: false, error: `more than ${MAX_PARSED_FILLS} fills` };
    at = re.lastIndex;
    if (m[4] === ',' && at >= inner.length) return { ok: false, error: `expected "${SUDOKU_FILLER_FORMAT}", found a trailing comma` };
  }
  return { ok: true, fills };
}

/** The canonical text of a fill list: `#### [[1,2,3],[4,1,2]]`. */
export function renderFills(fills: readonly (readonly number[])[]): string {
  return `#### ${formatFills(fills)}`;
}

/** The regex (whole completion) of a canonical answer for a grid size: at most size² fills of digits 1..size. */
export function fillsPattern(size: number): string {
  const d = `[1-${size}]`;
  const fill = `\\[${d},${d},${d}\\]`;
  return `#### \\[(?:${fill}(?:,${fill}){0,${size * size - 1}})?\\]`;
}

/** Joins the observation into the user message: task, current state, then each context block under a heading. */
export function renderObservation(observation: Observation, options: { includeTask?: boolean } = {}): string {
  const parts = options.includeTask === false ? [`Current state:\n${observation.state}`] : [observation.task.trim(), `Current state:\n${observation.state}`];
  for (const c of observation.context) parts.push(`### ${c.label}\n${c.text}`);
  parts.push(`Answer with one final line: ${SUDOKU_FILLER_FORMAT}`);
  return parts.join('\n\n');
}

/** The filler role for one config. */
export class SudokuFillerRole implements Role<Fill[]> {
  /** {@inheritDoc Role.id} */
  readonly id = SUDOKU_FILLER_ID;
  /** {@inheritDoc Role.produces} */
  readonly produces = Object.freeze([SUDOKU_FILLS]);
  /** The resolved config. */
  readonly config: SudokuFillerConfig;

  /** Builds the role; `config` is filled with defaults and checked. */
  constructor(config: Record<string, unknown> = {}) {
    this.config = resolveConfig(config);
  }

  /** The system prompt for a seat. */
  systemPrompt(seat: SeatContext): string {
    return (this.config.systemPrompt ?? SUDOKU_FILLER_SYSTEM_PROMPT).replaceAll('{seat}', seat.seat).replaceAll('{size}', String(this.config.size));
  }

  /** {@inheritDoc Role.prompt} */
  prompt(observation: Observation, seat: SeatContext): ChatMessage[] {
    return [
      { role: 'system', content: this.systemPrompt(seat) },
      { role: 'user', content: renderObservation(observation, { includeTask: this.config.includeTask }) },
    ];
  }

  /** {@inheritDoc Role.parse} */
  parse(text: string, _seat: SeatContext): Move<Fill[]> {
    const parsed = parseFills(text);
    return parsed.ok ? { kind: 'action', action: parsed.fills, text } : { kind: 'invalid', error: parsed.error, text };
  }

  /** {@inheritDoc Role.render} */
  render(action: Fill[], _seat: SeatContext): string {
    return renderFills(action);
  }

  /** `#### \[(?:F(?:,F){0,size²-1})?\]` with F = `\[[1-size],[1-size],[1-size]\]`. */
  grammar(_seat: SeatContext): OutputGrammar {
    return { kind: 'regex', pattern: fillsPattern(this.config.size) };
  }
}

/** The config schema file, read once. */
export const SUDOKU_FILLER_CONFIG_SCHEMA: JsonSchema = JSON.parse(
  readFileSync(new URL('../schemas/sudoku-filler.config.json', import.meta.url), 'utf8'),
) as JsonSchema;

/** The `sudoku-filler-v0` contribution. */
export class SudokuFillerContribution implements RoleContribution {
  /** {@inheritDoc RoleContribution.id} */
  readonly id = SUDOKU_FILLER_ID;
  /** {@inheritDoc RoleContribution.description} */
  readonly description = 'Sudoku filler: states cell fills as `#### [[row,col,value],...]`';
  /** {@inheritDoc RoleContribution.produces} */
  readonly produces = Object.freeze([SUDOKU_FILLS]);
  /** {@inheritDoc RoleContribution.configSchema} */
  readonly configSchema = SUDOKU_FILLER_CONFIG_SCHEMA;
  /** {@inheritDoc RoleContribution.create} */
  create(config: Record<string, unknown>): SudokuFillerRole {
    return new SudokuFillerRole(config);
  }
}
