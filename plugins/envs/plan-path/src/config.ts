import type { MoveNotation, SplitFractions } from '@troupe/kernel';
import { DEFAULT_SPLIT_FRACTIONS, MOVE_NOTATIONS } from '@troupe/kernel';

/** Reward variants: `shaped` (per-move shaping, see the README) or `sparse` (1 on success, else 0). */
export type PlanPathRewardKind = 'shaped' | 'sparse';

/**
 * Observation variants: `full` (task statement, turn line, coordinates in words, a grid with row/column numbers, context
 * blocks in sentences) or `compact` (for tiny byte-level models, where every character is a token: the task statement
 * unchanged, but the state is one line `A=(r,c) G=(r,c)` and the bare grid rows, and the context blocks are terse).
 */
export type PlanPathObservationKind = 'full' | 'compact';

/**
 * What moves listed after the walker reached the goal cost: `ignored` (nothing: they are not executed; the default) or
 * `penalized` (each costs what an invalid move costs, and the list gets no optimal-path bonus), so that a list that
 * overshoots scores below the exact one. Shaped reward only; the sparse reward counts success alone.
 */
export type PlanPathMovesAfterGoal = 'ignored' | 'penalized';

/**
 * The shaping potential φ of the shaped reward: `manhattan` (φ = −Manhattan distance to the goal; the paper's, the
 * default) or `path` (φ = −length of a shortest path to the goal around the walls). With `manhattan`, a move that
 * starts a detour around a wall costs about −1 and bumping into the wall about −0.06, so per-turn rewards prefer
 * standing at a wall to going around it; with `path`, every move along a shortest path earns about +1.
 */
export type PlanPathPotential = 'manhattan' | 'path';

/** A seat name of Plan-Path. */
export type PlanPathSeatName = 'proposer' | 'executor';

/** The seat lists `config.seats` accepts: the two-seat team, or the executor alone (the single-agent baseline). */
export const PLAN_PATH_SEAT_LISTS: readonly (readonly PlanPathSeatName[])[] = Object.freeze([
  Object.freeze(['proposer', 'executor'] as const),
  Object.freeze(['executor'] as const),
]);

/** The validated config of `plan-path-v0` (see `schemas/plan-path.config.json`). */
export interface PlanPathConfig {
  /** Side of the square grid, 5..10. Default 6 (small enough for a tiny model; the paper uses 10). */
  readonly size: number;
  /** Probability that a cell is a wall. Default 0.22 (the paper's value). */
  readonly wallProbability: number;
  /** Maximum number of turns T (each turn: proposer, then executor). Default 4. */
  readonly maxTurns: number;
  /**
   * Maximum length of one move list (the `moves` action type's `maxItems`). Instances whose shortest path is longer
   * are not generated, so the oracle always solves an instance in its first turn. Default 24.
   */
  readonly maxMoves: number;
  /** Reward variant. Default `shaped`. */
  readonly reward: PlanPathRewardKind;
  /**
   * Shaped reward of a move list that could not be parsed: the proposer's `proposal_reward` (paper: −2) and the
   * executor's `executed_reward` (the walker does not move). The sparse variant gives 0. Default −2.
   */
  readonly malformedPenalty: number;
  /** Fractions of the content-hash space per split. Default 0.8 / 0.1 / 0.1. */
  readonly splitFractions: SplitFractions;
  /** Observation text variant (see {@link PlanPathObservationKind}). Default `full`. */
  readonly observation: PlanPathObservationKind;
  /**
   * The seats, in turn order: `['proposer', 'executor']` (the team; default) or `['executor']` (the single-agent
   * baseline: the executor plays alone, sees the task and the current state with no proposal, and its list is executed).
   */
  readonly seats: readonly PlanPathSeatName[];
  /**
   * How observations write move lists (the proposal and the history): `moves` `[U,U,R]` (default) or `runs`
   * `[U2,R1]`. Match the planner role's `notation`, so the executor sees a proposal the way it writes its answer.
   */
  readonly notation: MoveNotation;
  /** What moves listed after the goal cost (see {@link PlanPathMovesAfterGoal}). Default `ignored`. */
  readonly movesAfterGoal: PlanPathMovesAfterGoal;
  /** The shaping potential of the shaped reward (see {@link PlanPathPotential}). Default `manhattan`. */
  readonly potential: PlanPathPotential;
}

/** The defaults, as in the config schema. */
export const DEFAULT_PLAN_PATH_CONFIG: PlanPathConfig = Object.freeze({
  size: 6,
  wallProbability: 0.22,
  maxTurns: 4,
  maxMoves: 24,
  reward: 'shaped',
  malformedPenalty: -2,
  splitFractions: DEFAULT_SPLIT_FRACTIONS,
  observation: 'full',
  seats: PLAN_PATH_SEAT_LISTS[0]!,
  notation: 'moves',
  movesAfterGoal: 'ignored',
  potential: 'manhattan',
});

const KEYS = Object.keys(DEFAULT_PLAN_PATH_CONFIG);

function fail(key: string, message: string): never {
  throw new Error(`plan-path-v0: environment.config.${key} ${message}`);
}

function integerIn(key: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(key, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Checks `config.seats` against {@link PLAN_PATH_SEAT_LISTS}; throws an error naming `config.seats` and the allowed lists. */
function seatListOf(value: unknown): readonly PlanPathSeatName[] {
  const match = PLAN_PATH_SEAT_LISTS.find((list) => Array.isArray(value) && value.length === list.length && list.every((s, i) => value[i] === s));
  if (!match) fail('seats', `must be ["proposer", "executor"] (the team) or ["executor"] (single agent), got ${JSON.stringify(value)}`);
  return match;
}

/**
 * Fills defaults and checks ranges (the kernel validates against the JSON schema first; this keeps direct users of
 * `create()` safe too). Throws an error naming the key and the allowed values.
 */
export function resolvePlanPathConfig(raw: Record<string, unknown> = {}): PlanPathConfig {
  for (const key of Object.keys(raw)) {
    if (!KEYS.includes(key)) fail(key, `is not a known key; known keys: ${KEYS.join(', ')}`);
  }
  const c = { ...DEFAULT_PLAN_PATH_CONFIG, ...raw } as Record<string, unknown>;
  const size = integerIn('size', c.size, 5, 10);
  const maxTurns = integerIn('maxTurns', c.maxTurns, 1, 50);
  const maxMoves = integerIn('maxMoves', c.maxMoves, 1, 200);
  const p = c.wallProbability;
  if (typeof p !== 'number' || !(p >= 0 && p <= 0.5)) fail('wallProbability', `must be a number from 0 to 0.5, got ${JSON.stringify(p)}`);
  if (c.reward !== 'shaped' && c.reward !== 'sparse') fail('reward', `must be "shaped" or "sparse", got ${JSON.stringify(c.reward)}`);
  if (c.observation !== 'full' && c.observation !== 'compact') fail('observation', `must be "full" or "compact", got ${JSON.stringify(c.observation)}`);
  const seats = seatListOf(c.seats);
  if (!MOVE_NOTATIONS.includes(c.notation as MoveNotation)) fail('notation', `must be "moves" or "runs", got ${JSON.stringify(c.notation)}`);
  if (c.movesAfterGoal !== 'ignored' && c.movesAfterGoal !== 'penalized') fail('movesAfterGoal', `must be "ignored" or "penalized", got ${JSON.stringify(c.movesAfterGoal)}`);
  if (c.potential !== 'manhattan' && c.potential !== 'path') fail('potential', `must be "manhattan" or "path", got ${JSON.stringify(c.potential)}`);
  const m = c.malformedPenalty;
  if (typeof m !== 'number' || !Number.isFinite(m)) fail('malformedPenalty', `must be a finite number, got ${JSON.stringify(m)}`);
  const f = c.splitFractions as Record<string, unknown> | undefined;
  const fractions = { train: f?.train, validation: f?.validation, test: f?.test };
  for (const [k, v] of Object.entries(fractions)) {
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) fail(`splitFractions.${k}`, `must be a number from 0 to 1, got ${JSON.stringify(v)}`);
  }
  const sum = (fractions.train as number) + (fractions.validation as number) + (fractions.test as number);
  if (Math.abs(sum - 1) > 1e-9) fail('splitFractions', `must add up to 1, got ${sum}`);
  return Object.freeze({
    size, wallProbability: p as number, maxTurns, maxMoves, reward: c.reward as PlanPathRewardKind,
    malformedPenalty: m as number, splitFractions: Object.freeze(fractions) as SplitFractions,
    observation: c.observation as PlanPathObservationKind, seats, notation: c.notation as MoveNotation,
    movesAfterGoal: c.movesAfterGoal as PlanPathMovesAfterGoal, potential: c.potential as PlanPathPotential,
  });
}
