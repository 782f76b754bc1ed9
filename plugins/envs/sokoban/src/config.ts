import type { MovesGameConfig } from '@troupe/game-kit';
import { readConfigSchema } from '@troupe/kernel';
import { ConfigReader, readMovesGameConfig, schemaDefaults } from '@troupe/game-kit';

/**
 * The shaping potential φ of the shaped reward: `manhattan` (φ = −Σ over boxes of the Manhattan distance to the
 * nearest goal; the paper's, the default) or `push` (φ = −Σ over boxes of the fewest pushes that bring the box onto a
 * goal, walls counted; a box on a dead square, from which no push sequence reaches a goal, counts as many pushes as
 * the board has cells). With `manhattan`, a push onto a dead square can score as much as a useful push, and the first
 * push of a detour around a wall toward the goal is punished; `push` scores each push by how much closer it really
 * brings the box.
 */
export type SokobanPotential = 'manhattan' | 'push';

/**
 * The validated config of `sokoban-v0` (see `schemas/sokoban.config.json`). The game kit's keys, with their defaults:
 * maxTurns 4; reward `shaped` (per-move shaping, see the README) or `sparse`; observation `full` or `compact` (the
 * state as one line `@=(r,c) $=(r,c) .=(r,c)` and the bare board rows, for byte-level models); seats the team (or
 * `['executor']` alone); splitFractions 0.8 / 0.1 / 0.1 of the layout hash space; notation `moves` (match the planner
 * role's); malformedPenalty −2 (the paper's shaped reward of an unparseable move list).
 */
export interface SokobanConfig extends MovesGameConfig {
  /** Side of the square room, outer walls included, 5..10. Default 6 (the paper's). */
  readonly size: number;
  /** Number of boxes (= goals), 1..4. Default 1 (the paper's). */
  readonly boxes: number;
  /** Most moves in one list (the `moves` action type's `maxItems`); longer-solution instances are not generated. Default 24. */
  readonly maxMoves: number;
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
  /** The shaping potential of the shaped reward (see {@link SokobanPotential}). Default `manhattan`. */
  readonly potential: SokobanPotential;
}

/** The config schema file, read once (shipped in `schemas/`); it states the defaults. */
export const SOKOBAN_CONFIG_SCHEMA = readConfigSchema(new URL('../schemas/sokoban.config.json', import.meta.url));

/**
 * Fills the schema's defaults and checks ranges (the kernel validates against the JSON schema first; this keeps direct users of
 * the constructor safe too). Throws an error naming the key and the allowed values.
 */
export function resolveSokobanConfig(raw: Record<string, unknown> = {}): SokobanConfig {
  const r = new ConfigReader('sokoban-v0', schemaDefaults(SOKOBAN_CONFIG_SCHEMA), raw);
  return Object.freeze({
    ...readMovesGameConfig(r, 200),
    size: r.integer('size', 5, 10),
    boxes: r.integer('boxes', 1, 4),
    deadlockTermination: r.boolean('deadlockTermination'),
    minBoxDistance: r.integer('minBoxDistance', 1, 10),
    reverseNodeCap: r.integer('reverseNodeCap', 100, 1_000_000),
    oracleNodeCap: r.integer('oracleNodeCap', 1000, 5_000_000),
    floorSymbol: r.oneOf('floorSymbol', ['_', ' '] as const),
    potential: r.oneOf('potential', ['manhattan', 'push'] as const),
  });
}
