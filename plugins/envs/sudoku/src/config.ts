import type { GameConfig } from '@troupe/game-kit';
import { readConfigSchema } from '@troupe/kernel';
import { ConfigReader, schemaDefaults } from '@troupe/game-kit';

/**
 * What the seats answer with: `fills` (a list of `[row, col, value]` cell fills, action type `sudoku-fills`) or `grid`
 * (the completed grid, action type `sudoku-grid`: every row written out, the clues kept).
 */
export type SudokuActionKind = 'fills' | 'grid';

/**
 * The validated config of `sudoku-v0` (see `schemas/sudoku.config.json`). The game kit's keys, with their defaults:
 * maxTurns 4; reward `shaped` (progress-based, see the README) or `sparse`; observation `full` or `compact` (the bare
 * rows of the current grid, for byte-level models); seats the team (or `['executor']` alone); splitFractions
 * 0.8 / 0.1 / 0.1 of the solution-grid hash space.
 */
export interface SudokuConfig extends GameConfig {
  /** 4 (2×2 boxes, the paper's; default) or 9 (3×3 boxes). */
  readonly size: 4 | 9;
  /** Shaped reward of text the role could not parse. Default −2. Sparse: 0. */
  readonly unparseablePenalty: number;
  /** Shaped reward of a parsed fill list that breaks the rules (nothing is applied). Default −1. Sparse: 0. */
  readonly invalidPenalty: number;
  /** Shaped cost per conflicting pair added (credit per pair removed). Default 0.1. */
  readonly conflictPenalty: number;
  /** Shaped bonus on solving. Default 2. */
  readonly solvedBonus: number;
  /** What the seats answer with (see {@link SudokuActionKind}). Default `fills`. */
  readonly action: SudokuActionKind;
}

/** The config schema file, read once (shipped in `schemas/`); it states the defaults. */
export const SUDOKU_CONFIG_SCHEMA = readConfigSchema(new URL('../schemas/sudoku.config.json', import.meta.url));

/** Fills the schema's defaults and checks ranges; throws an error naming the key and the allowed values. */
export function resolveSudokuConfig(raw: Record<string, unknown> = {}): SudokuConfig {
  const r = new ConfigReader('sudoku-v0', schemaDefaults(SUDOKU_CONFIG_SCHEMA), raw);
  return Object.freeze({
    ...r.game(),
    size: r.oneOf('size', [4, 9] as const),
    unparseablePenalty: r.finite('unparseablePenalty'),
    invalidPenalty: r.finite('invalidPenalty'),
    conflictPenalty: r.finite('conflictPenalty', 0),
    solvedBonus: r.finite('solvedBonus'),
    action: r.oneOf('action', ['fills', 'grid'] as const),
  });
}
