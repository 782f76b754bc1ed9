/**
 * `sudoku-v0`: Sudoku with exactly one solution, played by the proposer/executor game team (as in the Stronger-MAS paper).
 * With `seats: ['executor']` it is the single-agent baseline: the executor plays alone, with no proposal.
 */
import type {
  ActionTypeSpec,
  EnvironmentContribution,
  JsonSchema,
  Move,
  ProgramLanguage,
  Rng,
  Split,
} from '@troupe/kernel';
import { injectable } from '@troupe/kernel';
import type { Executed, GameState, ProposalBase, Proposed, SeatTexts, TurnBase } from '@troupe/game-kit';
import { ProposerExecutorGame, roundReward } from '@troupe/game-kit';
import type { SudokuConfig } from './config.js';
import { SUDOKU_CONFIG_SCHEMA, resolveSudokuConfig } from './config.js';
import type { Grid } from './grid.js';
import {
  conflictCount,
  copyGrid,
  emptyCells,
  filledCount,
  formatCompactGrid,
  formatFills,
  formatGridLine,
  isSolvedGrid,
  renderGrid,
} from './grid.js';
import type { SudokuInstance } from './instance.js';
import { generateInstance, sudokuInstanceKey } from './instance.js';
import { sudokuOracleProgram } from './oracle-program.js';

/** The contribution id. */
export const SUDOKU_ID = 'sudoku-v0';

/** The action type both seats produce with `action: fills` (the default): a list of cell fills. */
export const SUDOKU_FILLS = 'sudoku-fills';

/** The action type both seats produce with `action: grid`: the completed grid. */
export const SUDOKU_GRID = 'sudoku-grid';

/** One fill: `[row, col, value]`, all 1-based (rows and columns 1..size, values 1..size). */
export type Fill = readonly [number, number, number];

/** A completed-grid answer: size rows of size values 1..size, the clues kept. */
export type GridAnswer = readonly (readonly number[])[];

/** An action of either action type (which one a seat produces is set by `config.action`). */
export type SudokuAction = readonly Fill[] | GridAnswer;

/** JSON schema of the `sudoku-fills` action type for a grid size. */
export function fillsSchema(size: number): JsonSchema {
  return {
    type: 'array',
    maxItems: size * size,
    items: { type: 'array', minItems: 3, maxItems: 3, items: { type: 'integer', minimum: 1, maximum: size } },
  };
}

/** JSON schema of the `sudoku-grid` action type for a grid size: size rows of size integers 1..size. */
export function gridAnswerSchema(size: number): JsonSchema {
  const row = { type: 'array', minItems: size, maxItems: size, items: { type: 'integer', minimum: 1, maximum: size } };
  return { type: 'array', minItems: size, maxItems: size, items: row };
}

/** The action type both seats produce under a config: `sudoku-grid` with `action: grid`, else `sudoku-fills`. */
export function sudokuActionType({ size: n, action }: Pick<SudokuConfig, 'size' | 'action'>): ActionTypeSpec {
  if (action === 'grid') {
    const description = `The completed grid: ${n} rows of ${n} numbers from 1 to ${n}, every given clue kept.`;
    return { name: SUDOKU_GRID, schema: gridAnswerSchema(n), description };
  }
  const description = `A list of at most ${n * n} fills [row, col, value], each number from 1 to ${n}.`;
  return { name: SUDOKU_FILLS, schema: fillsSchema(n), description };
}

/** The outcome of applying a fill list (or of failing to). */
export type FillOutcome =
  | { readonly ok: true; /** The grid after the fills. */ readonly grid: Grid }
  | { readonly ok: false; /** Why the list was rejected (nothing applied). */ readonly error: string };

/** A rejected answer: nothing of it is applied. */
const reject = (error: string): FillOutcome => ({ ok: false, error });

/** `null` or the type of a value that should have been a list, for an error message. */
const typeName = (value: unknown): string => (value === null ? 'null' : typeof value);

/**
 * Applies `fills` (in order; a later fill of the same cell overwrites an earlier one) to `grid`. The whole list is
 * rejected, and nothing applied, when it is not a list of at most size² `[row, col, value]` integer triples with every
 * number in 1..size, or when a fill CHANGES a given clue (restating a clue with its own value is allowed).
 */
export function applyFills(puzzle: Grid, grid: Grid, fills: unknown): FillOutcome {
  const size = puzzle.length;
  if (!Array.isArray(fills)) return reject(`expected a list of [row, col, value] fills, got ${typeName(fills)}`);
  if (fills.length > size * size) return reject(`${fills.length} fills is more than ${size * size}`);
  const out = copyGrid(grid);
  for (const [k, f] of fills.entries()) {
    if (!Array.isArray(f) || f.length !== 3 || !f.every((x) => Number.isInteger(x))) {
      return reject(`fill ${k + 1} is ${JSON.stringify(f)}, expected [row, col, value] with three integers`);
    }
    const [r, c, v] = f as [number, number, number];
    if (r < 1 || r > size || c < 1 || c > size || v < 1 || v > size) {
      return reject(`fill ${k + 1} is [${r},${c},${v}]: row, column and value must be from 1 to ${size}`);
    }
    const clue = puzzle[r - 1]![c - 1]!;
    if (clue !== 0 && clue !== v)
      return reject(`fill ${k + 1} [${r},${c},${v}] changes the given clue ${clue} at row ${r}, column ${c}`);
    out[r - 1]![c - 1] = v;
  }
  return { ok: true, grid: out };
}

/**
 * Checks a completed-grid answer against the puzzle: it must be size rows of size integers, each from 1 to size, and
 * keep every given clue. Returns the grid it gives (the answer itself), or why it is rejected (nothing applied).
 */
export function applyGridAnswer(puzzle: Grid, answer: unknown): FillOutcome {
  const size = puzzle.length;
  const shape = `${size} rows of ${size} numbers`;
  if (!Array.isArray(answer)) return reject(`expected ${shape}, got ${typeName(answer)}`);
  if (answer.length !== size) return reject(`expected ${shape}, got ${answer.length} rows`);
  const out: number[][] = [];
  for (const [r, row] of answer.entries()) {
    if (!Array.isArray(row) || row.length !== size || !row.every((x) => Number.isInteger(x))) {
      return reject(`row ${r + 1} is ${JSON.stringify(row)}, expected ${size} integers`);
    }
    for (const [c, v] of (row as number[]).entries()) {
      if (v < 1 || v > size) return reject(`row ${r + 1}, column ${c + 1} is ${v}: values must be from 1 to ${size}`);
      const clue = puzzle[r]![c]!;
      if (clue !== 0 && clue !== v)
        return reject(`row ${r + 1}, column ${c + 1} is ${v} but the given clue there is ${clue}`);
    }
    out.push([...(row as number[])]);
  }
  return { ok: true, grid: out };
}

/** The fills a grid writes into the puzzle's empty cells, in row-major order (how a grid answer is recorded). */
export function fillsOfGrid(puzzle: Grid, grid: Grid): Fill[] {
  return emptyCells(puzzle).map(([r, c]) => [r + 1, c + 1, grid[r]![c]!]);
}

/** Cells (outside the clues) that hold their solution value. */
export function correctCount(instance: SudokuInstance, grid: Grid): number {
  return emptyCells(instance.puzzle).filter(([r, c]) => grid[r]![c] === instance.solution[r]![c]).length;
}

/**
 * The shaped reward of moving from `before` to `after` (a valid fill list): (newly correct cells − cells no longer
 * correct) / empty cells of the puzzle, − conflictPenalty × (conflicting pairs added − removed), + solvedBonus when
 * `after` is solved. Sparse: 1 when `after` is solved, else 0.
 */
export function fillReward(instance: SudokuInstance, before: Grid, after: Grid, config: SudokuConfig): number {
  const solved = isSolvedGrid(after);
  if (config.reward === 'sparse') return solved ? 1 : 0;
  const empty = instance.size * instance.size - instance.clues;
  const progress = (correctCount(instance, after) - correctCount(instance, before)) / empty;
  const conflicts = conflictCount(after) - conflictCount(before);
  return roundReward(progress - config.conflictPenalty * conflicts + (solved ? config.solvedBonus : 0));
}

/** Whether an answer could be used: `ok`, `unparseable` (the role could not parse the text) or `invalid` (parsed, but breaks the rules). */
export interface AnswerStatus {
  readonly status: 'ok' | 'unparseable' | 'invalid';
  /** Why it was unparseable or invalid (nothing of it is applied). */
  readonly error?: string;
}

/** The proposer's proposal of the current turn, simulated on a copy. */
export interface ProposalRecord extends ProposalBase, AnswerStatus {
  /** The proposed fills (with `action: grid`, the fills the grid writes), or `null` when unparseable or invalid. */
  readonly fills: readonly Fill[] | null;
  /** The grid the simulation ends with (the current grid when not ok). */
  readonly grid: Grid;
  /** Whether the simulated grid is solved. */
  readonly solves: boolean;
}

/** What happened in one finished turn. */
export interface TurnRecord extends TurnBase<ProposalRecord>, AnswerStatus {
  /** The executed fills (with `action: grid`, the fills the grid writes; `null` when unparseable or invalid: nothing applied). */
  readonly executed: readonly Fill[] | null;
  /** Filled cells after execution. */
  readonly filled: number;
  /** Conflicting pairs after execution. */
  readonly conflicts: number;
}

/** A Sudoku state: a plain, deeply frozen value. `step` returns a new one. */
export interface SudokuState extends GameState<SudokuInstance, ProposalRecord, TurnRecord> {
  /** The grid NOW (clues and the team's fills). */
  readonly grid: Grid;
}

/**
 * `7/16 c=1` (filled cells of all cells, conflicting pairs) or `solved` (every cell filled, no conflict), for the
 * compact observation.
 */
function compactCounts(filled: number, cells: number, conflicts: number): string {
  return filled === cells && conflicts === 0 ? 'solved' : `${filled}/${cells} c=${conflicts}`;
}

/** How a move applies: its status, why it failed, the fills it writes, the grid it gives and its reward. */
type Evaluation = Omit<ProposalRecord, 'solves' | 'tool'>;

/** What each seat is told to do when it answers with the completed grid. */
const GRID_DUTIES: SeatTexts = {
  alone: 'You play alone: give the grid that is applied.',
  proposer:
    'You are the proposer: propose the completed grid. It is simulated on a copy and shown to the executor; it is not applied.',
  executor:
    "You are the executor: you see the proposer's grid and whether it solves the puzzle. Give the grid that is actually applied (copy the proposal if it is right, fix it if not).",
};

/** What each seat is told to do when it answers with fills. */
const FILL_DUTIES: SeatTexts = {
  alone: 'You play alone: give the fills that are applied.',
  proposer:
    'You are the proposer: propose fills that complete the grid. They are simulated on a copy and shown to the executor; they are not applied.',
  executor:
    "You are the executor: you see the proposer's fills and the grid they would give. Give the fills that are actually applied (copy the proposal if it is right, fix it if not).",
};

/** The Sudoku environment for one config. */
export class SudokuEnvironment extends ProposerExecutorGame<SudokuState, SudokuAction, SudokuConfig> {
  /** Builds the environment; `config` is filled with defaults and range-checked. */
  constructor(config: Record<string, unknown> = {}) {
    const c = resolveSudokuConfig(config);
    const grid = c.action === 'grid';
    const what = grid ? 'grid is' : 'fills are';
    super(SUDOKU_ID, c, sudokuActionType(c), {
      proposer: `Proposes ${grid ? 'a completed grid; it is' : 'cell fills; they are'} simulated on a copy, never applied.`,
      executor: `Sees the proposal and its simulated grid; its ${what} applied.`,
      alone: `Plays alone (single agent): sees the task and the current grid; its ${what} applied.`,
    });
  }

  /** {@inheritDoc Environment.instance} Each instance is searched on its own (`generateInstance`). */
  instance(split: Split, index: number, seed: number): SudokuInstance {
    return generateInstance(split, index, seed, this.config);
  }

  /** {@inheritDoc Environment.instanceKey} */
  override instanceKey(instance: SudokuInstance): string {
    return sudokuInstanceKey(instance);
  }

  /** Puzzle, solution, clue count, the oracle's fills and a picture. */
  describe(instance: SudokuInstance): Record<string, unknown> {
    return {
      ...instance,
      oracleFills: this.fillsToSolve(instance, instance.puzzle),
      picture: renderGrid(instance.puzzle),
    };
  }

  /** {@inheritDoc Environment.reset} */
  reset(instance: SudokuInstance): SudokuState {
    return this.start(instance, { grid: copyGrid(instance.puzzle) }, isSolvedGrid(instance.puzzle));
  }

  /** The task statement for a seat. Never shows a complete grid. */
  taskText(seat: string): string {
    const n = this.config.size;
    const box = n === 4 ? '2x2' : '3x3';
    const grid = this.config.action === 'grid';
    const answers = grid
      ? [
          `An answer is the completed grid: its ${n} rows from top to bottom, each written as its ${n} numbers from 1 to ${n}.`,
          `An answer that changes a clue, has a number outside 1 to ${n}, or has the wrong number of rows or cells is invalid: nothing of it is applied.`,
        ]
      : [
          `A fill is [row, col, value]: rows are numbered 1 to ${n} from the top, columns 1 to ${n} from the left, values 1 to ${n}.`,
          `Fills are applied in order; filling a cell ${this.alone ? 'you' : 'the team'} filled before overwrites it.`,
          `A list with a fill that changes a clue, or with a number outside 1 to ${n}, is invalid: nothing of it is applied.`,
        ];
    return [
      `Sudoku: fill the ${n}x${n} grid so that every row, every column and every ${box} box holds each number from 1 to ${n} exactly once. The puzzle has exactly one solution.`,
      `Empty cells are shown as ".". The clues of the puzzle are fixed: ${grid ? 'an answer' : 'a fill'} may not change a clue.`,
      ...answers,
      this.turnsLine(),
      this.duty(seat, grid ? GRID_DUTIES : FILL_DUTIES),
      ...(grid ? [] : [`Answer with a list of at most ${n * n} fills.`]),
    ].join('\n');
  }

  /** The current state as text: turn, counts, the clues and the grid as it is NOW. */
  stateText(state: SudokuState): string {
    const { instance, grid } = state;
    if (this.config.observation === 'compact') return formatCompactGrid(grid);
    const n = instance.size;
    const conflicts = conflictCount(grid);
    return [
      `${this.turnLine(state)} Filled: ${filledCount(grid)} of ${n * n} cells (${instance.clues} clues, fixed). ` +
        `Conflicts: ${conflicts}.${state.success ? ' Solved.' : ''}`,
      'Clues (fixed):',
      renderGrid(instance.puzzle),
      'Current grid:',
      renderGrid(grid),
    ].join('\n');
  }

  /** The proposal as the executor is shown it (its simulated grid; never the solution). */
  proposalText(p: ProposalRecord): string {
    const grid = this.config.action === 'grid';
    if (this.config.observation === 'compact') {
      if (p.status !== 'ok') return p.status === 'unparseable' ? 'none' : 'invalid';
      return `${grid ? formatGridLine(p.grid) : formatFills(p.fills ?? [])} -> ${compactCounts(filledCount(p.grid), p.grid.length ** 2, conflictCount(p.grid))}`;
    }
    if (p.status === 'unparseable')
      return `The proposer's answer could not be parsed (${p.error ?? 'unparseable'}); there is no proposal.`;
    if (p.status === 'invalid')
      return `The proposer's ${grid ? 'grid breaks' : 'fills break'} the rules (${p.error ?? 'invalid'}); ${grid ? 'it' : 'they'} would not be applied.`;
    const conflicts = conflictCount(p.grid);
    const simulated = `${filledCount(p.grid)} of ${p.grid.length ** 2} cells filled, ${conflicts} conflict${conflicts === 1 ? '' : 's'}, ${p.solves ? 'solves the puzzle' : 'does not solve the puzzle'}`;
    if (grid) return `Proposed grid (${simulated}):\n${renderGrid(p.grid)}`;
    return `Proposed fills: ${formatFills(p.fills ?? [])}\nSimulated: ${simulated}. The grid it gives:\n${renderGrid(p.grid)}`;
  }

  /** An applied answer as text: the fill list, or with `action: grid` the grid it gave on one line. */
  private answerText(puzzle: Grid, fills: readonly Fill[]): string {
    if (this.config.action !== 'grid') return formatFills(fills);
    const out = applyFills(puzzle, puzzle, fills);
    return out.ok ? formatGridLine(out.grid) : formatFills(fills);
  }

  /** One finished turn as a context block. */
  historyText(t: TurnRecord, state: Pick<SudokuState, 'instance'>): string {
    const { puzzle } = state.instance;
    const size = puzzle.length;
    if (this.config.observation === 'compact') {
      const fills = (status: string, list: readonly Fill[] | null): string =>
        status === 'ok' ? this.answerText(puzzle, list ?? []) : status === 'unparseable' ? 'none' : 'invalid';
      return `${t.proposal ? `${fills(t.proposal.status, t.proposal.fills)} ` : ''}${fills(t.status, t.executed)} -> ${compactCounts(t.filled, size * size, t.conflicts)}`;
    }
    const proposed = t.proposal
      ? `proposed ${t.proposal.status === 'ok' ? this.answerText(puzzle, t.proposal.fills ?? []) : t.proposal.status}; `
      : '';
    const executed =
      t.status === 'ok' ? this.answerText(puzzle, t.executed ?? []) : `${t.status} (${t.error ?? ''}), nothing applied`;
    return `Turn ${t.turn + 1}: ${proposed}executed ${executed}; ${t.filled} cells filled, ${t.conflicts} conflict${t.conflicts === 1 ? '' : 's'}.`;
  }

  protected observationData(state: SudokuState): Record<string, unknown> {
    return { size: state.instance.size, puzzle: state.instance.puzzle, grid: state.grid };
  }

  /** Applies a move to a grid: the outcome, its status and its reward (a grid answer is recorded as the fills it writes). */
  private evaluate(state: SudokuState, move: Move<SudokuAction>): Evaluation {
    const { config } = this;
    const failed = (status: 'unparseable' | 'invalid', error: string, penalty: number): Evaluation => ({
      status,
      error,
      fills: null,
      grid: state.grid,
      reward: config.reward === 'sparse' ? 0 : penalty,
    });
    if (move.kind === 'invalid')
      return failed('unparseable', move.error || 'unparseable output', config.unparseablePenalty);
    const grid = config.action === 'grid';
    const out = grid
      ? applyGridAnswer(state.instance.puzzle, move.action)
      : applyFills(state.instance.puzzle, state.grid, move.action);
    if (!out.ok) return failed('invalid', out.error, config.invalidPenalty);
    const fills = grid
      ? fillsOfGrid(state.instance.puzzle, out.grid)
      : (move.action as Fill[]).map((f) => [f[0], f[1], f[2]] as const);
    return { status: 'ok', fills, grid: out.grid, reward: fillReward(state.instance, state.grid, out.grid, config) };
  }

  protected propose(state: SudokuState, move: Move<SudokuAction>): Proposed<ProposalRecord> {
    const e = this.evaluate(state, move);
    return { proposal: { ...e, solves: e.status === 'ok' && isSolvedGrid(e.grid) }, malformed: e.status !== 'ok' };
  }

  protected execute(state: SudokuState, move: Move<SudokuAction>): Executed<SudokuState, TurnRecord> {
    const { fills: executed, grid, ...outcome } = this.evaluate(state, move);
    const record = {
      turn: state.turn,
      proposal: state.proposal,
      executed,
      ...outcome,
      filled: filledCount(grid),
      conflicts: conflictCount(grid),
    };
    return { record, malformed: outcome.status !== 'ok', success: isSolvedGrid(grid), next: { grid: copyGrid(grid) } };
  }

  /** The fills that turn `grid` into the solution: every non-clue cell whose value differs, in row-major order. */
  fillsToSolve({ puzzle, solution }: SudokuInstance, grid: Grid): Fill[] {
    return fillsOfGrid(puzzle, solution).filter(([r, c, v]) => grid[r - 1]![c - 1] !== v);
  }

  /**
   * For either seat: the fills that solve the puzzle from the CURRENT grid (overwriting wrong fills), or with
   * `action: grid` the solution grid.
   */
  protected solve(state: SudokuState): SudokuAction {
    if (this.config.action === 'grid') return copyGrid(state.instance.solution);
    return this.fillsToSolve(state.instance, state.grid);
  }

  /**
   * The oracle as a Python program that prints exactly the oracle's action (the coder's demonstrations when it plays the
   * proposer): it completes the current grid by backtracking. `undefined` for another language and where the current
   * grid holds a wrong fill (no completion exists) or is full.
   */
  protected override oracleSource(state: SudokuState, language: ProgramLanguage): string | undefined {
    return sudokuOracleProgram(state.grid, state.instance.solution, this.config.action, language);
  }

  /**
   * 1 to `size` fills of random non-clue cells with random values (never touching a clue); with `action: grid`, the
   * current grid with every empty cell and 1 to `size` filled non-clue cells given random values.
   */
  protected random(state: SudokuState, rng: Rng): SudokuAction {
    const n = state.instance.size;
    const open = emptyCells(state.instance.puzzle);
    if (this.config.action === 'grid') {
      const out = copyGrid(state.grid);
      for (const [r, c] of open) if (out[r]![c] === 0) out[r]![c] = 1 + rng.int(n);
      for (let k = 1 + rng.int(n); k > 0; k--) {
        const [r, c] = open[rng.int(open.length)]!;
        out[r]![c] = 1 + rng.int(n);
      }
      return out;
    }
    const count = 1 + rng.int(n);
    return Array.from({ length: count }, () => {
      const [r, c] = open[rng.int(open.length)]!;
      return [r + 1, c + 1, 1 + rng.int(n)] as Fill;
    });
  }
}

/** The `sudoku-v0` contribution. */
@injectable()
export class SudokuContribution implements EnvironmentContribution {
  readonly id = SUDOKU_ID;
  readonly description =
    'Sudoku with exactly one solution; a proposer proposes cell fills or a completed grid, an executor applies them';
  readonly configSchema = SUDOKU_CONFIG_SCHEMA;
  create(config: Record<string, unknown>): SudokuEnvironment {
    return new SudokuEnvironment(config);
  }
}
