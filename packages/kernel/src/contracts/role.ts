import type { ChatMessage, JsonSchema, Move, ProgramLanguage } from './common.js';
import type { Observation } from './environment.js';

/** Contribution point for roles (planner, coder, tester, solver, ...). */
export const RoleContribution = Symbol.for('troupe.RoleContribution');

/**
 * In a role's `produces`: it can produce an action of any type (the coder as a tool agent: its program prints the
 * action, which its output parser reads as JSON when the type is not one it knows); the environment's `step` checks it.
 */
export const ANY_ACTION_TYPE = '*';

/** Whether a role's `produces` list covers `actionType` (named in it, or {@link ANY_ACTION_TYPE}). */
export function producesActionType(produces: readonly string[], actionType: string): boolean {
  return produces.includes(actionType) || produces.includes(ANY_ACTION_TYPE);
}

/** A factory for one role id (e.g. `planner-v0`). */
export interface RoleContribution {
  /** Versioned id, `name-vN`. */
  readonly id: string;
  /** One line for `troupe plugins ls`. */
  readonly description: string;
  /** The action types this role can produce (matched against the environment's seat specs; see {@link ANY_ACTION_TYPE}). */
  readonly produces: readonly string[];
  /** JSON schema of the role's config (from the team spec's `seats.<seat>.roleConfig`). */
  readonly configSchema: JsonSchema;
  /** Builds the role for one validated config. */
  create(config: Record<string, unknown>): Role;
}

/**
 * An output grammar a decoder can enforce so that every sample parses. `regex` is matched against the whole
 * completion (JavaScript syntax, anchored by the decoder); `choices` lists the allowed completions exactly.
 */
export type OutputGrammar =
  | { readonly kind: 'regex'; /** Pattern the whole completion must match. */ readonly pattern: string }
  | { readonly kind: 'choices'; /** The exact allowed completions. */ readonly choices: readonly string[] };

/** What a role knows about the seat it plays when it prompts or parses. */
export interface SeatContext {
  /** The seat name. */
  readonly seat: string;
  /** The action type the seat must produce. */
  readonly actionType: string;
  /** Abort signal of the episode (tools must stop when it fires). */
  readonly signal?: AbortSignal;
}

/** What a role may use when it renders an action (see {@link Role.render}). */
export interface RenderContext {
  /**
   * A program that computes the rendered action from the current state (the environment's `oracleProgram`), by
   * language; `undefined` when the environment has none.
   */
  readonly oracleProgram?: (language: ProgramLanguage) => string | undefined;
}

/** How a seat's policy is prompted and how its text becomes a typed action. */
export interface Role<A = unknown> {
  /** The contribution id. */
  readonly id: string;
  /** The action types it produces. */
  readonly produces: readonly string[];
  /** The chat messages for one observation. The same observation always gives the same messages. */
  prompt(observation: Observation, seat: SeatContext): ChatMessage[];
  /**
   * Turns model text into a move. Never throws on bad text: anything unparseable is a `{ kind: 'invalid' }` move
   * with a human-readable error. May be async (a coder runs its program in the sandbox).
   */
  parse(text: string, seat: SeatContext): Move<A> | Promise<Move<A>>;
  /**
   * The canonical text for an action (used by scripted policies and for warm-start demonstrations). `context` carries
   * what the environment knows about how the action was found (its oracle as a program), for roles that write
   * programs.
   */
  render(action: A, seat: SeatContext, context?: RenderContext): string;
  /** The grammar of the role's output for a seat, for constrained decoding; absent when free-form. */
  grammar?(seat: SeatContext): OutputGrammar | undefined;
}
