/**
 * `planner-v0`: a role whose seat states an action list `#### [U,R,D]` (the action type `moves`).
 */
import type {
  ChatMessage,
  JsonSchema,
  Move,
  Observation,
  OutputGrammar,
  Role,
  RoleContribution,
  SeatContext,
} from '@troupe/kernel';
import { injectable, readConfigSchema } from '@troupe/kernel';
import {
  MOVE_NOTATIONS,
  findAnswerLine,
  formatMoveList,
  quoteExcerpt as quote,
  renderUserMessage,
  type MoveNotation,
} from '@troupe/game-kit';

/** The contribution id. */
export const PLANNER_ID = 'planner-v0';

/** A move direction. */
export type PlannerMove = 'U' | 'D' | 'L' | 'R';

/** The validated config of the planner. */
export interface PlannerConfig {
  /** Most moves in one answer. Default 24. */
  readonly maxMoves: number;
  /** Accept `up/down/left/right` and lower-case letters. Default true. */
  readonly acceptWords: boolean;
  /** Replacement system prompt (`{seat}`, `{maxMoves}` substituted). */
  readonly systemPrompt?: string;
  /**
   * Include the observation's task statement in the user message. Default true. `false` keeps the prompt short
   * (the state and the context only): tiny byte-level models train an order of magnitude faster on short prompts.
   */
  readonly includeTask: boolean;
  /**
   * The barest user message: the state, then each context block as `label: text`; no task statement, no
   * `Current state:` heading, no answer-format line. Default false. For tiny byte-level models trained from scratch
   * (every character is a token, and constrained decoding enforces the format anyway).
   */
  readonly terse: boolean;
  /**
   * How the answer writes moves: `moves`, one letter per step (`#### [U,U,R]`, default), or `runs`, each letter with
   * its repeat count 1-9 (`#### [U2,R1]`): a small model copies a count instead of counting repeated letters. Set the
   * environment's `notation` to the same value so that proposals are shown the way answers are written.
   */
  readonly notation: MoveNotation;
}

/** The default config. */
export const DEFAULT_PLANNER_CONFIG: PlannerConfig = Object.freeze({
  maxMoves: 24,
  acceptWords: true,
  includeTask: true,
  terse: false,
  notation: 'moves',
});

/** What a well-formed answer looks like, quoted in every parse error (`moves` notation). */
export const PLANNER_FORMAT = '#### [U,D,...]';

/** What a well-formed answer looks like in the `runs` notation. */
export const PLANNER_RUNS_FORMAT = '#### [U2,R1,...]';

/** The answer format of a notation. */
function formatOf(notation: MoveNotation): string {
  return notation === 'runs' ? PLANNER_RUNS_FORMAT : PLANNER_FORMAT;
}

/** The built-in system prompt; `{seat}` and `{maxMoves}` are substituted. */
export const PLANNER_SYSTEM_PROMPT = [
  'You are the {seat} of a team that solves a task by stating move lists.',
  'Read the task and the current state, then answer. End your reply with one final line of the form',
  '#### [U,R,D]',
  'listing the moves in order, comma-separated, inside square brackets: U = up, D = down, L = left, R = right.',
  'At most {maxMoves} moves. The last line that starts with #### is your answer; write nothing after it.',
].join('\n');

/** The built-in system prompt of the `runs` notation; `{seat}` and `{maxMoves}` are substituted. */
export const PLANNER_RUNS_SYSTEM_PROMPT = [
  'You are the {seat} of a team that solves a task by stating move lists.',
  'Read the task and the current state, then answer. End your reply with one final line of the form',
  '#### [U2,R1]',
  'listing the moves in order, comma-separated, inside square brackets, each as a direction and how many steps to take',
  'in it (1-9): U = up, D = down, L = left, R = right; U2 = two steps up.',
  'At most {maxMoves} steps in all. The last line that starts with #### is your answer; write nothing after it.',
].join('\n');

const WORDS: Readonly<Record<string, PlannerMove>> = { up: 'U', down: 'D', left: 'L', right: 'R' };

function resolveConfig(raw: Record<string, unknown>): PlannerConfig {
  const known = ['maxMoves', 'acceptWords', 'systemPrompt', 'includeTask', 'terse', 'notation'];
  for (const key of Object.keys(raw)) {
    if (!known.includes(key))
      throw new Error(`${PLANNER_ID}: roleConfig.${key} is not a known key; known keys: ${known.join(', ')}`);
  }
  const c = { ...DEFAULT_PLANNER_CONFIG, ...raw } as Record<string, unknown>;
  if (typeof c.maxMoves !== 'number' || !Number.isInteger(c.maxMoves) || c.maxMoves < 1 || c.maxMoves > 200) {
    throw new Error(
      `${PLANNER_ID}: roleConfig.maxMoves must be an integer from 1 to 200, got ${JSON.stringify(c.maxMoves)}`,
    );
  }
  if (typeof c.acceptWords !== 'boolean')
    throw new Error(`${PLANNER_ID}: roleConfig.acceptWords must be a boolean, got ${JSON.stringify(c.acceptWords)}`);
  if (typeof c.includeTask !== 'boolean')
    throw new Error(`${PLANNER_ID}: roleConfig.includeTask must be a boolean, got ${JSON.stringify(c.includeTask)}`);
  if (typeof c.terse !== 'boolean')
    throw new Error(`${PLANNER_ID}: roleConfig.terse must be a boolean, got ${JSON.stringify(c.terse)}`);
  if (!MOVE_NOTATIONS.includes(c.notation as MoveNotation)) {
    throw new Error(
      `${PLANNER_ID}: roleConfig.notation must be one of ${MOVE_NOTATIONS.map((n) => JSON.stringify(n)).join(', ')}, got ${JSON.stringify(c.notation)}`,
    );
  }
  if (c.systemPrompt !== undefined && typeof c.systemPrompt !== 'string') {
    throw new Error(`${PLANNER_ID}: roleConfig.systemPrompt must be a string, got ${JSON.stringify(c.systemPrompt)}`);
  }
  return Object.freeze({
    maxMoves: c.maxMoves,
    acceptWords: c.acceptWords,
    includeTask: c.includeTask,
    terse: c.terse,
    notation: c.notation as MoveNotation,
    ...(c.systemPrompt === undefined ? {} : { systemPrompt: c.systemPrompt as string }),
  });
}

/** The result of {@link parseMoveList}: the moves, or a precise error. */
export type ParsedMoves =
  { readonly ok: true; readonly moves: PlannerMove[] } | { readonly ok: false; readonly error: string };

/**
 * Parses a planner answer: the LAST line starting with `####` must be `#### [m1,m2,...]` (spaces allowed, each move
 * U/D/L/R, optionally quoted; with `acceptWords`, also any case and `up/down/left/right`). In the `runs` notation each
 * item may carry a repeat count (`U2`; no count = 1) and `maxMoves` bounds the steps in all. Never throws.
 */
export function parseMoveList(
  text: string,
  options: Pick<PlannerConfig, 'maxMoves' | 'acceptWords'> & {
    readonly notation?: MoveNotation;
  } = DEFAULT_PLANNER_CONFIG,
): ParsedMoves {
  const runs = options.notation === 'runs';
  const FORMAT = formatOf(options.notation ?? 'moves');
  const found = findAnswerLine(text, FORMAT);
  if (!found.ok) return found;
  const line = found.line;
  const rest = line.slice(4).trim();
  const m = /^\[([^[\]]*)\]$/.exec(rest);
  if (!m) return { ok: false, error: `expected "${FORMAT}", found ${quote(line)}` };
  const inner = m[1]!.trim();
  if (inner === '') return { ok: true, moves: [] };
  const tokens = inner.split(',');
  if (tokens.length > options.maxMoves) {
    return {
      ok: false,
      error: `expected "${FORMAT}" with at most ${options.maxMoves} moves, found ${tokens.length} ${runs ? 'items' : 'moves'}`,
    };
  }
  const moves: PlannerMove[] = [];
  for (const [i, raw] of tokens.entries()) {
    let token = raw
      .trim()
      .replace(/^(['"`])(.*)\1$/, '$2')
      .trim();
    let count = 1;
    const counted = runs ? /^(.*?)\s*(\d+)$/.exec(token) : null;
    if (counted) {
      token = counted[1]!;
      count = Number(counted[2]);
      if (count < 1)
        return { ok: false, error: `expected "${FORMAT}", found a count of 0 in item ${i + 1} (counts are 1-9)` };
    }
    let move: PlannerMove | undefined;
    if (/^[UDLR]$/.test(token)) move = token as PlannerMove;
    else if (options.acceptWords && /^[udlr]$/i.test(token)) move = token.toUpperCase() as PlannerMove;
    else if (options.acceptWords) move = WORDS[token.toLowerCase()];
    if (!move) {
      return {
        ok: false,
        error: `expected "${FORMAT}", found ${quote(raw.trim())} as ${runs ? 'item' : 'move'} ${i + 1} (moves are U, D, L, R${runs ? ', each with a count' : ''})`,
      };
    }
    if (moves.length + count > options.maxMoves) {
      return {
        ok: false,
        error: `expected "${FORMAT}" with at most ${options.maxMoves} moves in all, found more (item ${i + 1} brings the total to ${moves.length + count})`,
      };
    }
    for (let k = 0; k < count; k++) moves.push(move);
  }
  return { ok: true, moves };
}

/** The canonical text of a move list: `#### [U,R]`, or `#### [U2,R1]` in the `runs` notation. */
export function renderMoveList(moves: readonly PlannerMove[], notation: MoveNotation = 'moves'): string {
  return `#### ${formatMoveList(moves, notation)}`;
}

/**
 * The regex (whole completion) of a canonical answer with at most `maxMoves` items: moves, or in the `runs` notation
 * runs `[UDLR][1-9]` (the parser also bounds the steps in all by `maxMoves`).
 */
export function moveListPattern(maxMoves: number, notation: MoveNotation = 'moves'): string {
  const item = notation === 'runs' ? '[UDLR][1-9]' : '[UDLR]';
  return maxMoves <= 1 ? `#### \\[(?:${item})?\\]` : `#### \\[(?:${item}(?:,${item}){0,${maxMoves - 1}})?\\]`;
}

/**
 * Joins the observation into the user message: task, current state, then each context block under a heading, then
 * the answer format. `terse`: only the state and `label: text` lines.
 */
export function renderObservation(
  observation: Observation,
  options: { includeTask?: boolean; terse?: boolean; notation?: MoveNotation } = {},
): string {
  return renderUserMessage(observation, { ...options, format: formatOf(options.notation ?? 'moves') });
}

/** The planner role for one config. */
export class PlannerRole implements Role<PlannerMove[]> {
  /** {@inheritDoc Role.id} */
  readonly id = PLANNER_ID;
  /** {@inheritDoc Role.produces} */
  readonly produces = Object.freeze(['moves']);
  /** The resolved config. */
  readonly config: PlannerConfig;

  /** Builds the role; `config` is filled with defaults and checked. */
  constructor(config: Record<string, unknown> = {}) {
    this.config = resolveConfig(config);
  }

  /** The system prompt for a seat. */
  systemPrompt(seat: SeatContext): string {
    return (
      this.config.systemPrompt ?? (this.config.notation === 'runs' ? PLANNER_RUNS_SYSTEM_PROMPT : PLANNER_SYSTEM_PROMPT)
    )
      .replaceAll('{seat}', seat.seat)
      .replaceAll('{maxMoves}', String(this.config.maxMoves));
  }

  /** {@inheritDoc Role.prompt} */
  prompt(observation: Observation, seat: SeatContext): ChatMessage[] {
    return [
      { role: 'system', content: this.systemPrompt(seat) },
      {
        role: 'user',
        content: renderObservation(observation, {
          includeTask: this.config.includeTask,
          terse: this.config.terse,
          notation: this.config.notation,
        }),
      },
    ];
  }

  /** {@inheritDoc Role.parse} */
  parse(text: string, _seat: SeatContext): Move<PlannerMove[]> {
    const parsed = parseMoveList(text, this.config);
    return parsed.ok ? { kind: 'action', action: parsed.moves, text } : { kind: 'invalid', error: parsed.error, text };
  }

  /** {@inheritDoc Role.render} */
  render(action: PlannerMove[], _seat: SeatContext): string {
    return renderMoveList(action, this.config.notation);
  }

  /** `#### \[(?:[UDLR](?:,[UDLR]){0,N-1})?\]` with N = maxMoves (`runs`: items `[UDLR][1-9]`). */
  grammar(_seat: SeatContext): OutputGrammar {
    return { kind: 'regex', pattern: moveListPattern(this.config.maxMoves, this.config.notation) };
  }
}

/** The config schema file, read once. */
export const PLANNER_CONFIG_SCHEMA: JsonSchema = readConfigSchema(
  new URL('../schemas/planner.config.json', import.meta.url),
);

/** The `planner-v0` contribution. */
@injectable()
export class PlannerContribution implements RoleContribution {
  /** {@inheritDoc RoleContribution.id} */
  readonly id = PLANNER_ID;
  /** {@inheritDoc RoleContribution.description} */
  readonly description = 'Planner: states a move list as `#### [U,R,D]`';
  /** {@inheritDoc RoleContribution.produces} */
  readonly produces = Object.freeze(['moves']);
  /** {@inheritDoc RoleContribution.configSchema} */
  readonly configSchema = PLANNER_CONFIG_SCHEMA;
  /** {@inheritDoc RoleContribution.create} */
  create(config: Record<string, unknown>): PlannerRole {
    return new PlannerRole(config);
  }
}
