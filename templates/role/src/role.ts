/**
 * A role whose output format is one line: `MOVES: R R U`. It shows how a role prompts a seat, turns model text into a
 * typed action (never throwing on bad text), renders an action back to canonical text, and declares the grammar that
 * constrained decoding enforces. It produces the `moves` action type (a list of U, D, L, R) used by grid games.
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

/** The contribution id. Bump the `-vN` suffix whenever the format changes. */
export const ID = '__ID__';

/** The config schema, read from `schemas/config.json` (`troupe manifest` names this file in package.json). */
export const CONFIG_SCHEMA: JsonSchema = readConfigSchema(new URL('../schemas/config.json', import.meta.url));

/** One move. */
export type Step = 'U' | 'D' | 'L' | 'R';

/** The validated config. */
export interface MovesLineConfig {
  /** Most moves one answer may state. */
  readonly maxMoves: number;
  /** Extra text appended to the system prompt. */
  readonly instructions: string;
}

const LINE = /^\s*MOVES:((?:\s+[UDLR])*)\s*$/gm;

/** The role for one config. */
export class MovesLineRole implements Role<readonly Step[]> {
  /** The contribution id. */
  readonly id = ID;
  /** The action types it produces. */
  readonly produces = ['moves'] as const;

  /** @param config the validated config */
  constructor(readonly config: MovesLineConfig) {}

  /** A system message with the output format, and a user message with the task, the current state and the context. */
  prompt(observation: Observation, seat: SeatContext): ChatMessage[] {
    const system =
      `You play the seat "${seat.seat}". Think briefly, then end your answer with ONE line of the form\n` +
      'MOVES: R R U\n' +
      `listing at most ${this.config.maxMoves} moves, each U (up), D (down), L (left) or R (right), separated by spaces.` +
      (this.config.instructions ? `\n${this.config.instructions}` : '');
    const context = observation.context.map((c) => `${c.label}:\n${c.text}`).join('\n\n');
    const user = [observation.task, `Current state (turn ${observation.turn}):\n${observation.state}`, context]
      .filter(Boolean)
      .join('\n\n');
    return [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ];
  }

  /** Reads the LAST `MOVES:` line; anything else is an invalid move with a reason. */
  parse(text: string, _seat: SeatContext): Move<readonly Step[]> {
    const lines = [...text.matchAll(LINE)];
    const last = lines[lines.length - 1];
    if (last === undefined) return { kind: 'invalid', error: 'no line of the form "MOVES: R R U" found', text };
    const moves = (last[1] ?? '').trim().split(/\s+/).filter(Boolean) as Step[];
    if (moves.length === 0) return { kind: 'invalid', error: 'the MOVES line lists no moves', text };
    if (moves.length > this.config.maxMoves) {
      return {
        kind: 'invalid',
        error: `the MOVES line lists ${moves.length} moves; at most ${this.config.maxMoves} are allowed`,
        text,
      };
    }
    return { kind: 'action', action: moves, text };
  }

  /** The canonical line for an action. */
  render(action: readonly Step[], _seat: SeatContext): string {
    return `MOVES: ${action.join(' ')}`;
  }

  /** One line, 1..maxMoves moves: a constrained decoder can only produce parseable answers. */
  grammar(_seat: SeatContext): OutputGrammar {
    return { kind: 'regex', pattern: `MOVES:( [UDLR]){1,${this.config.maxMoves}}` };
  }
}

/** The contribution the plugin's module binds to `RoleContribution`. */
@injectable()
export class MovesLineContribution implements RoleContribution {
  /** The contribution id. */
  readonly id = ID;
  /** One line for listings. */
  readonly description = 'States a list of moves on one line: MOVES: R R U';
  /** The action types it produces. */
  readonly produces = ['moves'];
  /** The schema of `schemas/config.json`. */
  readonly configSchema = CONFIG_SCHEMA;

  /** Builds the role for one validated config. */
  create(config: Record<string, unknown>): MovesLineRole {
    return new MovesLineRole({
      maxMoves: typeof config.maxMoves === 'number' ? config.maxMoves : 16,
      instructions: typeof config.instructions === 'string' ? config.instructions : '',
    });
  }
}
