import type { SplitFractions } from '@troupe/kernel';
import { DEFAULT_SPLIT_FRACTIONS } from '@troupe/kernel';

/** Reward variants: `shaped` (progress-based, see the README) or `sparse` (1 on success, else 0). */
export type SudokuRewardKind = 'shaped' | 'sparse';

/**
 * Observation variants: `full` (a counts line, the clues and the current grid with row/column labels and box rules,
 * context blocks in sentences) or `compact` (for tiny byte-level models, where every character is a token: the task
 * statement unchanged, but the state is the bare rows of the current grid and the context blocks are terse).
 */
export type SudokuObservationKind = 'full' | 'compact';

/**
 * What the seats answer with: `fills` (a list of `[row, col, value]` cell fills, action type `sudoku-fills`) or `grid`
 * (the completed grid, action type `sudoku-grid`: every row written out, the clues kept).
 */
export type SudokuActionKind = 'fills' | 'grid';

/** A seat name of Sudoku. */
export type SudokuSeatName = 'proposer' | 'executor';

/** The seat lists `config.seats` accepts: the two-seat team, or the executor alone (the single-agent baseline). */
export const SUDOKU_SEAT_LISTS: readonly (readonly SudokuSeatName[])[] = Object.freeze([
  Object.freeze(['proposer', 'executor'] as const),
  Object.freeze(['executor'] as const),
]);

/** The validated config of `sudoku-v0` (see `schemas/sudoku.config.json`). */
export interface SudokuConfig {
  /** 4 (2×2 boxes, the paper's; default) or 9 (3×3 boxes). */
  readonly size: 4 | 9;
  /** Maximum number of turns T (each turn: proposer, then executor). Default 4. */
  readonly maxTurns: number;
  /** Reward variant. Default `shaped`. */
  readonly reward: SudokuRewardKind;
  /** Shaped reward of text the role could not parse. Default −2. Sparse: 0. */
  readonly unparseablePenalty: number;
  /** Shaped reward of a parsed fill list that breaks the rules (nothing is applied). Default −1. Sparse: 0. */
  readonly invalidPenalty: number;
  /** Shaped cost per conflicting pair added (credit per pair removed). Default 0.1. */
  readonly conflictPenalty: number;
  /** Shaped bonus on solving. Default 2. */
  readonly solvedBonus: number;
  /** Fractions of the solution-grid hash space per split. Default 0.8 / 0.1 / 0.1. */
  readonly splitFractions: SplitFractions;
  /** Observation text variant (see {@link SudokuObservationKind}). Default `full`. */
  readonly observation: SudokuObservationKind;
  /**
   * The seats, in turn order: `['proposer', 'executor']` (the team; default) or `['executor']` (the single-agent
   * baseline: the executor plays alone, sees the task and the current grid with no proposal, and its fills are applied).
   */
  readonly seats: readonly SudokuSeatName[];
  /** What the seats answer with (see {@link SudokuActionKind}). Default `fills`. */
  readonly action: SudokuActionKind;
}

/** The defaults, as in the config schema. */
export const DEFAULT_SUDOKU_CONFIG: SudokuConfig = Object.freeze({
  size: 4,
  maxTurns: 4,
  reward: 'shaped',
  unparseablePenalty: -2,
  invalidPenalty: -1,
  conflictPenalty: 0.1,
  solvedBonus: 2,
  splitFractions: DEFAULT_SPLIT_FRACTIONS,
  observation: 'full',
  seats: SUDOKU_SEAT_LISTS[0]!,
  action: 'fills',
});

const KEYS = Object.keys(DEFAULT_SUDOKU_CONFIG);

function fail(key: string, message: string): never {
  throw new Error(`sudoku-v0: environment.config.${key} ${message}`);
}

function finite(c: Record<string, unknown>, key: string, min = -Infinity): number {
  const v = c[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min) fail(key, `must be a finite number${min > -Infinity ? ` ≥ ${min}` : ''}, got ${JSON.stringify(v)}`);
  return v;
}

/** Checks `config.seats` against {@link SUDOKU_SEAT_LISTS}; throws an error naming `config.seats` and the allowed lists. */
function seatListOf(value: unknown): readonly SudokuSeatName[] {
  const match = SUDOKU_SEAT_LISTS.find((list) => Array.isArray(value) && value.length === list.length && list.every((s, i) => value[i] === s));
  if (!match) fail('seats', `must be ["proposer", "executor"] (the team) or ["executor"] (single agent), got ${JSON.stringify(value)}`);
  return match;
}

/** Fills defaults and checks ranges; throws an error naming the key and the allowed values. */
export function resolveSudokuConfig(raw: Record<string, unknown> = {}): SudokuConfig {
  for (const key of Object.keys(raw)) {
    if (!KEYS.includes(key)) fail(key, `is not a known key; known keys: ${KEYS.join(', ')}`);
  }
  const c = { ...DEFAULT_SUDOKU_CONFIG, ...raw } as Record<string, unknown>;
  if (c.size !== 4 && c.size !== 9) fail('size', `must be 4 or 9, got ${JSON.stringify(c.size)}`);
  const t = c.maxTurns;
  if (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > 50) fail('maxTurns', `must be an integer from 1 to 50, got ${JSON.stringify(t)}`);
  if (c.reward !== 'shaped' && c.reward !== 'sparse') fail('reward', `must be "shaped" or "sparse", got ${JSON.stringify(c.reward)}`);
  if (c.observation !== 'full' && c.observation !== 'compact') fail('observation', `must be "full" or "compact", got ${JSON.stringify(c.observation)}`);
  const seats = seatListOf(c.seats);
  if (c.action !== 'fills' && c.action !== 'grid') fail('action', `must be "fills" or "grid", got ${JSON.stringify(c.action)}`);
  const f = c.splitFractions as Record<string, unknown> | undefined;
  const fractions = { train: f?.train, validation: f?.validation, test: f?.test };
  for (const [k, v] of Object.entries(fractions)) {
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) fail(`splitFractions.${k}`, `must be a number from 0 to 1, got ${JSON.stringify(v)}`);
  }
  const sum = (fractions.train as number) + (fractions.validation as number) + (fractions.test as number);
  if (Math.abs(sum - 1) > 1e-9) fail('splitFractions', `must add up to 1, got ${sum}`);
  return Object.freeze({
    size: c.size as 4 | 9, maxTurns: t as number, reward: c.reward as SudokuRewardKind,
    unparseablePenalty: finite(c, 'unparseablePenalty'), invalidPenalty: finite(c, 'invalidPenalty'),
    conflictPenalty: finite(c, 'conflictPenalty', 0), solvedBonus: finite(c, 'solvedBonus'),
    splitFractions: Object.freeze(fractions) as SplitFractions, observation: c.observation as SudokuObservationKind, seats,
    action: c.action as SudokuActionKind,
  });
}
