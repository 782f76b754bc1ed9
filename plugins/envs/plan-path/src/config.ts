import type { MovesGameConfig } from '@troupe/game-kit';
import { readConfigSchema } from '@troupe/kernel';
import { ConfigReader, readMovesGameConfig, schemaDefaults } from '@troupe/game-kit';

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

/**
 * The validated config of `plan-path-v0` (see `schemas/plan-path.config.json`). The game kit's keys, with their
 * defaults: maxTurns 4; reward `shaped` (per-move shaping, see the README) or `sparse`; observation `full` or `compact`
 * (the state as one line `A=(r,c) G=(r,c)` and the bare grid rows, for byte-level models); seats the team (or
 * `['executor']` alone); splitFractions 0.8 / 0.1 / 0.1; notation `moves` (match the planner role's); malformedPenalty
 * −2 (the paper's shaped reward of a move list that could not be parsed).
 */
export interface PlanPathConfig extends MovesGameConfig {
  /** Side of the square grid, 5..10. Default 6 (small enough for a tiny model; the paper uses 10). */
  readonly size: number;
  /** Probability that a cell is a wall. Default 0.22 (the paper's value). */
  readonly wallProbability: number;
  /**
   * Maximum length of one move list (the `moves` action type's `maxItems`). Instances whose shortest path is longer
   * are not generated, so the oracle always solves an instance in its first turn. Default 24.
   */
  readonly maxMoves: number;
  /** What moves listed after the goal cost (see {@link PlanPathMovesAfterGoal}). Default `ignored`. */
  readonly movesAfterGoal: PlanPathMovesAfterGoal;
  /** The shaping potential of the shaped reward (see {@link PlanPathPotential}). Default `manhattan`. */
  readonly potential: PlanPathPotential;
}

/** The config schema file, read once (shipped in `schemas/`); it states the defaults. */
export const PLAN_PATH_CONFIG_SCHEMA = readConfigSchema(new URL('../schemas/plan-path.config.json', import.meta.url));

/**
 * Fills the schema's defaults and checks ranges (the kernel validates against the JSON schema first; this keeps direct users of
 * `create()` safe too). Throws an error naming the key and the allowed values.
 */
export function resolvePlanPathConfig(raw: Record<string, unknown> = {}): PlanPathConfig {
  const r = new ConfigReader('plan-path-v0', schemaDefaults(PLAN_PATH_CONFIG_SCHEMA), raw);
  return Object.freeze({
    ...readMovesGameConfig(r, 200),
    size: r.integer('size', 5, 10),
    wallProbability: r.number('wallProbability', 0, 0.5),
    movesAfterGoal: r.oneOf('movesAfterGoal', ['ignored', 'penalized'] as const),
    potential: r.oneOf('potential', ['manhattan', 'path'] as const),
  });
}
