import type { MoveNotation, SplitFractions } from '@troupe/kernel';
import { DEFAULT_SPLIT_FRACTIONS, MOVE_NOTATIONS } from '@troupe/kernel';

/** Reward variants: `shaped` (per-move shaping, see the README) or `sparse` (1 on success, else 0). */
export type SokobanRewardKind = 'shaped' | 'sparse';

/**
 * Observation variants: `full` (turn line, coordinates in words, a board with row/column numbers, context blocks in
 * sentences) or `compact` (for tiny byte-level models, where every character is a token: the task statement unchanged,
 * but the state is one line `@=(r,c) $=(r,c) .=(r,c)` and the bare board rows, and the context blocks are terse).
 */
export type SokobanObservationKind = 'full' | 'compact';

/**
 * The shaping potential φ of the shaped reward: `manhattan` (φ = −Σ over boxes of the Manhattan distance to the
 * nearest goal; the paper's, the default) or `push` (φ = −Σ over boxes of the fewest pushes that bring the box onto a
 * goal, walls counted; a box on a dead square, from which no push sequence reaches a goal, counts as many pushes as
 * the board has cells). With `manhattan`, a push onto a dead square can score as much as a useful push, and the first
 * push of a detour around a wall toward the goal is punished; `push` scores each push by how much closer it really
 * brings the box.
 */
export type SokobanPotential = 'manhattan' | 'push';

/** A seat name of Sokoban. */
export type SokobanSeatName = 'proposer' | 'executor';

/** The seat lists `config.seats` accepts: the two-seat team, or the executor alone (the single-agent baseline). */
export const SOKOBAN_SEAT_LISTS: readonly (readonly SokobanSeatName[])[] = Object.freeze([
  Object.freeze(['proposer', 'executor'] as const),
  Object.freeze(['executor'] as const),
]);

/** The validated config of `sokoban-v0` (see `schemas/sokoban.config.json`). */
export interface SokobanConfig {
  /** Side of the square room, outer walls included, 5..10. Default 6 (the paper's). */
  readonly size: number;
  /** Number of boxes (= goals), 1..4. Default 1 (the paper's). */
  readonly boxes: number;
  /** Maximum number of turns T (each turn: proposer, then executor). Default 4. */
  readonly maxTurns: number;
  /** Most moves in one list (the `moves` action type's `maxItems`); longer-solution instances are not generated. Default 24. */
  readonly maxMoves: number;
  /** Reward variant. Default `shaped`. */
  readonly reward: SokobanRewardKind;
  /** Shaped reward of an unparseable move list (the paper's −2). Sparse: 0. */
  readonly malformedPenalty: number;
  /** End the episode when an executed list leaves a box in a non-goal corner. Default true. */
  readonly deadlockTermination: boolean;
  /** Generation: every box starts at least this far (Manhattan) from its nearest goal. Default 2. */
  readonly minBoxDistance: number;
  /** Generation: most placements the reverse-play search visits. Default 20,000. */
  readonly reverseNodeCap: number;
  /** Most states the BFS oracle expands. Default 200,000. */
  readonly oracleNodeCap: number;
  /** How floor cells are drawn in observations: `_` (default) or ` `. */
  readonly floorSymbol: '_' | ' ';
  /** Fractions of the layout content-hash space per split. Default 0.8 / 0.1 / 0.1. */
  readonly splitFractions: SplitFractions;
  /** Observation text variant (see {@link SokobanObservationKind}). Default `full`. */
  readonly observation: SokobanObservationKind;
  /**
   * The seats, in turn order: `['proposer', 'executor']` (the team; default) or `['executor']` (the single-agent
   * baseline: the executor plays alone, sees the task and the current state with no proposal, and its list is executed).
   */
  readonly seats: readonly SokobanSeatName[];
  /**
   * How observations write move lists (the proposal and the history): `moves` `[U,U,R]` (default) or `runs`
   * `[U2,R1]`. Match the planner role's `notation`, so the executor sees a proposal the way it writes its answer.
   */
  readonly notation: MoveNotation;
  /** The shaping potential of the shaped reward (see {@link SokobanPotential}). Default `manhattan`. */
  readonly potential: SokobanPotential;
}

/** The defaults, as in the config schema. */
export const DEFAULT_SOKOBAN_CONFIG: SokobanConfig = Object.freeze({
  size: 6,
  boxes: 1,
  maxTurns: 4,
  maxMoves: 24,
  reward: 'shaped',
  malformedPenalty: -2,
  deadlockTermination: true,
  minBoxDistance: 2,
  reverseNodeCap: 20_000,
  oracleNodeCap: 200_000,
  floorSymbol: '_',
  splitFractions: DEFAULT_SPLIT_FRACTIONS,
  observation: 'full',
  seats: SOKOBAN_SEAT_LISTS[0]!,
  notation: 'moves',
  potential: 'manhattan',
});

const KEYS = Object.keys(DEFAULT_SOKOBAN_CONFIG);

function fail(key: string, message: string): never {
  throw new Error(`sokoban-v0: environment.config.${key} ${message}`);
}

function integerIn(c: Record<string, unknown>, key: string, min: number, max: number): number {
  const value = c[key];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(key, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Checks `config.seats` against {@link SOKOBAN_SEAT_LISTS}; throws an error naming `config.seats` and the allowed lists. */
function seatListOf(value: unknown): readonly SokobanSeatName[] {
  const match = SOKOBAN_SEAT_LISTS.find((list) => Array.isArray(value) && value.length === list.length && list.every((s, i) => value[i] === s));
  if (!match) fail('seats', `must be ["proposer", "executor"] (the team) or ["executor"] (single agent), got ${JSON.stringify(value)}`);
  return match;
}

/**
 * Fills defaults and checks ranges (the kernel validates against the JSON schema first; this keeps direct users of
 * the constructor safe too). Throws an error naming the key and the allowed values.
 */
export function resolveSokobanConfig(raw: Record<string, unknown> = {}): SokobanConfig {
  for (const key of Object.keys(raw)) {
    if (!KEYS.includes(key)) fail(key, `is not a known key; known keys: ${KEYS.join(', ')}`);
  }
  const c = { ...DEFAULT_SOKOBAN_CONFIG, ...raw } as Record<string, unknown>;
  const size = integerIn(c, 'size', 5, 10);
  const boxes = integerIn(c, 'boxes', 1, 4);
  const maxTurns = integerIn(c, 'maxTurns', 1, 50);
  const maxMoves = integerIn(c, 'maxMoves', 1, 200);
  const minBoxDistance = integerIn(c, 'minBoxDistance', 1, 10);
  const reverseNodeCap = integerIn(c, 'reverseNodeCap', 100, 1_000_000);
  const oracleNodeCap = integerIn(c, 'oracleNodeCap', 1000, 5_000_000);
  if (c.reward !== 'shaped' && c.reward !== 'sparse') fail('reward', `must be "shaped" or "sparse", got ${JSON.stringify(c.reward)}`);
  const m = c.malformedPenalty;
  if (typeof m !== 'number' || !Number.isFinite(m)) fail('malformedPenalty', `must be a finite number, got ${JSON.stringify(m)}`);
  if (typeof c.deadlockTermination !== 'boolean') fail('deadlockTermination', `must be a boolean, got ${JSON.stringify(c.deadlockTermination)}`);
  if (c.floorSymbol !== '_' && c.floorSymbol !== ' ') fail('floorSymbol', `must be "_" or " ", got ${JSON.stringify(c.floorSymbol)}`);
  if (c.observation !== 'full' && c.observation !== 'compact') fail('observation', `must be "full" or "compact", got ${JSON.stringify(c.observation)}`);
  const seats = seatListOf(c.seats);
  if (!MOVE_NOTATIONS.includes(c.notation as MoveNotation)) fail('notation', `must be "moves" or "runs", got ${JSON.stringify(c.notation)}`);
  if (c.potential !== 'manhattan' && c.potential !== 'push') fail('potential', `must be "manhattan" or "push", got ${JSON.stringify(c.potential)}`);
  const f = c.splitFractions as Record<string, unknown> | undefined;
  const fractions = { train: f?.train, validation: f?.validation, test: f?.test };
  for (const [k, v] of Object.entries(fractions)) {
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) fail(`splitFractions.${k}`, `must be a number from 0 to 1, got ${JSON.stringify(v)}`);
  }
  const sum = (fractions.train as number) + (fractions.validation as number) + (fractions.test as number);
  if (Math.abs(sum - 1) > 1e-9) fail('splitFractions', `must add up to 1, got ${sum}`);
  return Object.freeze({
    size, boxes, maxTurns, maxMoves, reward: c.reward as SokobanRewardKind, malformedPenalty: m as number,
    deadlockTermination: c.deadlockTermination as boolean, minBoxDistance, reverseNodeCap, oracleNodeCap,
    floorSymbol: c.floorSymbol as '_' | ' ', splitFractions: Object.freeze(fractions) as SplitFractions,
    observation: c.observation as SokobanObservationKind, seats, notation: c.notation as MoveNotation,
    potential: c.potential as SokobanPotential,
  });
}
