/**
 * `sokoban-v0`: Sokoban with the proposer/executor game-team workflow (as in the Stronger-MAS paper).
 * With `seats: ['executor']` it is the single-agent baseline: the executor plays alone, with no proposal.
 */
import { readFileSync } from 'node:fs';
import type {
  ActionTypeSpec, Environment, EnvironmentContribution, JsonSchema, Move, Observation, ProgramLanguage, Rng, SeatSpec, Split,
  StepResult, ToolDetails,
} from '@troupe/kernel';
import { formatMoveList, movesOf, movesSchema, toolDetailsOf, toolDetailsText } from '@troupe/kernel';
import type { Board, Direction, Placement, Pos } from './board.js';
import {
  DIRECTIONS, boxesOnGoals, cornerDeadlocks, formatPos, formatPositions, isSolved, renderBoard, runMoves, solve,
} from './board.js';
import type { SokobanConfig, SokobanSeatName } from './config.js';
import { resolveSokobanConfig } from './config.js';
import type { SokobanInstance } from './instance.js';
import { SokobanStream, sokobanInstanceKey } from './instance.js';
import { sokobanOracleProgram } from './oracle-program.js';

/** The contribution id. */
export const SOKOBAN_ID = 'sokoban-v0';

/** The seats of the team, in turn order (`config.seats` may keep only the executor). */
export const SOKOBAN_SEATS = Object.freeze(['proposer', 'executor'] as const);

/** The signal names every step returns (see the README). */
export const SOKOBAN_SIGNALS = Object.freeze(['proposal_reward', 'executed_reward', 'success', 'malformed'] as const);

/** The proposer's proposal of the current turn, simulated on a copy of the state. */
export interface ProposalRecord {
  /** The proposed moves, or `null` when the proposer's answer was malformed. */
  readonly moves: readonly Direction[] | null;
  /** Why it was malformed. */
  readonly error?: string;
  /** Where the simulation ends (the current placement when malformed). */
  readonly end: Placement;
  /** Whether the simulation solves the puzzle. */
  readonly solves: boolean;
  /** Invalid moves in the simulation. */
  readonly invalid: number;
  /** Boxes the simulation leaves in a non-goal corner (deadlocked). */
  readonly deadlocked: readonly Pos[];
  /** The simulated reward (the proposer's `proposal_reward`). */
  readonly reward: number;
  /** The program that printed the proposal and its output, when the proposer used a tool (the coder). */
  readonly tool?: ToolDetails;
}

/** What happened in one finished turn. */
export interface TurnRecord {
  /** The turn index. */
  readonly turn: number;
  /** The proposal of that turn; `null` in the single-seat variant (`seats: ['executor']`: there is no proposer). */
  readonly proposal: ProposalRecord | null;
  /** The executed moves (`null` when the executor's answer was malformed). */
  readonly executed: readonly Direction[] | null;
  /** Why the executor's answer was malformed. */
  readonly error?: string;
  /** Placement before execution. */
  readonly from: Placement;
  /** Placement after execution. */
  readonly to: Placement;
  /** Invalid executed moves. */
  readonly invalid: number;
  /** Pushes. */
  readonly pushes: number;
  /** Executed-list moves ignored because the puzzle was solved. */
  readonly ignored: number;
  /** The executed reward. */
  readonly reward: number;
}

/** A Sokoban state: a plain, deeply frozen value. `step` returns a new one. */
export interface SokobanState {
  /** The puzzle. */
  readonly instance: SokobanInstance;
  /** Where the player and the boxes are NOW. */
  readonly placement: Placement;
  /** The current turn (0-based). */
  readonly turn: number;
  /** Index in the environment's `seats` (the configured seats) of the seat that acts next. */
  readonly seatIndex: number;
  /** Moves executed so far (invalid ones included; ignored ones not). */
  readonly movesUsed: number;
  /** This turn's proposal, once the proposer has acted. */
  readonly proposal: ProposalRecord | null;
  /** Finished turns, oldest first. */
  readonly history: readonly TurnRecord[];
  /** Whether every box is on a goal. */
  readonly success: boolean;
  /** Boxes in a non-goal corner (the puzzle can no longer be solved). */
  readonly deadlocked: readonly Pos[];
  /** Whether the episode is over (solved, deadlocked with `deadlockTermination`, or the turn limit). */
  readonly done: boolean;
}

export { movesSchema } from '@troupe/kernel';

/** `(r,c)`: a position without the space, for the compact observation. */
function compactPos(pos: Pos): string {
  return `(${pos.row},${pos.col})`;
}

/** `(r,c)(r,c)`: positions without separators, for the compact observation. */
function compactPositions(list: readonly Pos[]): string {
  return list.map(compactPos).join('');
}

/** `@(r,c) $(r,c)`: a placement for the compact observation. */
function compactPlacement(p: Placement): string {
  return `@${compactPos(p.player)} $${compactPositions(p.boxes)}`;
}

/** Deep-freezes a plain value (objects and arrays), returning it. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

/** The Sokoban environment for one config. */
export class SokobanEnvironment implements Environment<SokobanInstance, SokobanState, Direction[]> {
  /** {@inheritDoc Environment.id} */
  readonly id = SOKOBAN_ID;
  /** The resolved config. */
  readonly config: SokobanConfig;
  /** {@inheritDoc Environment.seats} */
  readonly seats: readonly SeatSpec[];
  /** {@inheritDoc Environment.actionTypes} */
  readonly actionTypes: readonly ActionTypeSpec[];
  /** {@inheritDoc Environment.maxTurns} */
  readonly maxTurns: number;
  /** The signals every step returns: `proposal_reward`, `executed_reward`, `success`, `malformed` (see the README). */
  readonly signals: readonly string[] = SOKOBAN_SIGNALS;
  private readonly streams = new Map<string, SokobanStream>();

  /** Builds the environment; `config` is filled with defaults and range-checked. */
  constructor(config: Record<string, unknown> = {}) {
    this.config = resolveSokobanConfig(config);
    this.maxTurns = this.config.maxTurns;
    const team = this.config.seats.length === 2;
    this.seats = deepFreeze([
      { name: 'proposer', actionType: 'moves', description: 'Proposes a move list; it is simulated on a copy, never executed.' },
      team
        ? { name: 'executor', actionType: 'moves', description: 'Sees the proposal and its simulated outcome; its move list is executed.' }
        : { name: 'executor', actionType: 'moves', description: 'Plays alone (single agent): sees the task and the current state; its move list is executed.' },
    ].filter((s) => this.config.seats.includes(s.name as SokobanSeatName)));
    this.actionTypes = deepFreeze([
      { name: 'moves', schema: movesSchema(this.config.maxMoves), description: `A list of at most ${this.config.maxMoves} moves, each U, D, L or R.` },
    ]);
  }

  /** {@inheritDoc Environment.instance} Instances of one (split, seed) are generated in order and memoised. */
  instance(split: Split, index: number, seed: number): SokobanInstance {
    const key = `${split}\u241f${seed}`;
    let stream = this.streams.get(key);
    if (!stream) {
      stream = new SokobanStream(this.config, split, seed);
      this.streams.set(key, stream);
    }
    return stream.get(index);
  }

  /** {@inheritDoc Environment.instanceKey} */
  instanceKey(instance: SokobanInstance): string {
    return sokobanInstanceKey(instance);
  }

  /** Grid rows, goals, boxes, player, the optimal length, the oracle solution and a picture. */
  describe(instance: SokobanInstance): Record<string, unknown> {
    const start: Placement = { player: instance.player, boxes: instance.boxes };
    const result = solve(instance, start, this.config.oracleNodeCap);
    return {
      size: instance.size,
      grid: [...instance.grid],
      goals: instance.goals.map((p) => ({ ...p })),
      boxes: instance.boxes.map((p) => ({ ...p })),
      player: { ...instance.player },
      shortest: instance.shortest,
      oracleMoves: result.status === 'solved' ? result.moves : [],
      picture: renderBoard(instance, start, { floor: this.config.floorSymbol, coordinates: false }),
    };
  }

  /** {@inheritDoc Environment.reset} */
  reset(instance: SokobanInstance): SokobanState {
    return deepFreeze({
      instance, placement: { player: instance.player, boxes: instance.boxes }, turn: 0, seatIndex: 0, movesUsed: 0,
      proposal: null, history: [], success: isSolved(instance, instance.boxes), deadlocked: [], done: false,
    });
  }

  private seatIndexOf(seat: string): number {
    const names = this.seats.map((s) => s.name);
    const i = names.indexOf(seat);
    if (i < 0) {
      throw new Error(`${SOKOBAN_ID}: unknown seat "${seat}"; the seats are ${names.join(', ')}`
        + `${names.length < SOKOBAN_SEATS.length ? ' (config.seats is ["executor"]: the single-agent variant)' : ''}`);
    }
    return i;
  }

  /** The task statement for a seat. */
  taskText(seat: string): string {
    const { size, maxTurns, maxMoves, boxes, floorSymbol } = this.config;
    const floorName = floorSymbol === '_' ? '_' : '(space)';
    const alone = this.seats.length === 1;
    const duty = alone
      ? 'You play alone: give the move list that is executed.'
      : seat === 'proposer'
        ? 'You are the proposer: propose a move list that pushes every box onto a goal. It is simulated on a copy and shown to the executor; it is not executed.'
        : 'You are the executor: you see the proposer\'s list and its simulated outcome. Give the move list that is actually executed (copy the proposal if it is right, fix it if not).';
    return [
      `Sokoban: push ${boxes === 1 ? 'the box onto the goal' : `all ${boxes} boxes onto the goals`} in a ${size}x${size} room.`,
      `Legend: @ player, $ box, . goal, * box on a goal, + player on a goal, # wall, ${floorName} floor.`,
      'Coordinates are (row, col): row 0 is the top row, col 0 the left column.',
      'Moves: U = up (row - 1), D = down (row + 1), L = left (col - 1), R = right (col + 1).',
      'Walking into a box pushes it one cell if the cell behind it is free floor; boxes can be pushed, never pulled.',
      'A move into a wall, or into a box that cannot move, is invalid: the player stays. Moves after the puzzle is solved are ignored.',
      'A box pushed into a corner that is not a goal can never be moved again.',
      alone ? `You have at most ${maxTurns} turns.` : `The team has at most ${maxTurns} turns; each turn the proposer speaks first, then the executor.`,
      duty,
      `Answer with a list of at most ${maxMoves} moves.`,
    ].join('\n');
  }

  /** The current state as text: turn, moves used, positions and the board as it is NOW. */
  stateText(state: SokobanState): string {
    const { instance, placement } = state;
    if (this.config.observation === 'compact') {
      const status = state.success ? ' solved' : state.deadlocked.length ? ` stuck${compactPositions(state.deadlocked)}` : '';
      return [
        `@=${compactPos(placement.player)} $=${compactPositions(placement.boxes)} .=${compactPositions(instance.goals)}${status}`,
        renderBoard(instance, placement, { floor: this.config.floorSymbol, coordinates: false }),
      ].join('\n');
    }
    const on = boxesOnGoals(instance, placement.boxes);
    const status = state.success ? ' Solved.' : state.deadlocked.length ? ` Deadlock: box at ${formatPositions(state.deadlocked)} is stuck in a corner.` : '';
    return [
      `Turn ${Math.min(state.turn, this.maxTurns - 1) + 1} of ${this.maxTurns}. Moves used so far: ${state.movesUsed}.`,
      `Player @ at ${formatPos(placement.player)}. Boxes $ at ${formatPositions(placement.boxes)}. Goals . at ${formatPositions(instance.goals)}.`,
      `Boxes on goals: ${on} of ${instance.goals.length}.${status}`,
      renderBoard(instance, placement, { floor: this.config.floorSymbol }),
    ].join('\n');
  }

  /** A move list as observations write it, in the configured notation. */
  formatMoves(moves: readonly Direction[]): string {
    return formatMoveList(moves, this.config.notation);
  }

  /** The proposal as the executor is shown it. */
  proposalText(p: ProposalRecord): string {
    if (this.config.observation === 'compact') {
      if (!p.moves) return 'none';
      return `${this.formatMoves(p.moves)} -> ${compactPlacement(p.end)} ${p.solves ? 'solved' : 'miss'}${p.invalid ? ` ${p.invalid} invalid` : ''}`
        + `${p.deadlocked.length ? ` stuck${compactPositions(p.deadlocked)}` : ''}`;
    }
    if (!p.moves) return `The proposer's answer could not be parsed (${p.error ?? 'unparseable'}); there is no proposal.`;
    const result = p.solves ? 'solves the puzzle' : 'does not solve the puzzle';
    return `Proposed moves: ${this.formatMoves(p.moves)}\nSimulated: player ends at ${formatPos(p.end.player)}, boxes at ${formatPositions(p.end.boxes)}; `
      + `${result}, ${p.invalid} invalid move${p.invalid === 1 ? '' : 's'}${p.deadlocked.length ? `, box stuck in a corner at ${formatPositions(p.deadlocked)}` : ''}.`;
  }

  private historyText(t: TurnRecord): string {
    if (this.config.observation === 'compact') {
      const moves = (m: readonly Direction[] | null): string => (m ? this.formatMoves(m) : 'none');
      return `${t.proposal ? `${moves(t.proposal.moves)} ` : ''}${moves(t.executed)} -> ${compactPlacement(t.to)}${t.invalid ? ` ${t.invalid} invalid` : ''}`;
    }
    const proposed = t.proposal ? `proposed ${t.proposal.moves ? this.formatMoves(t.proposal.moves) : 'unparseable'}; ` : '';
    const executed = t.executed ? this.formatMoves(t.executed) : `unparseable (${t.error ?? ''}), nothing moved`;
    return `Turn ${t.turn + 1}: ${proposed}executed ${executed}; player ${formatPos(t.from.player)} -> ${formatPos(t.to.player)}, `
      + `boxes ${formatPositions(t.from.boxes)} -> ${formatPositions(t.to.boxes)}${t.invalid ? `, ${t.invalid} invalid` : ''}.`;
  }

  /** {@inheritDoc Environment.observe} */
  observe(state: SokobanState, seat: string): Observation {
    this.seatIndexOf(seat);
    const context: { label: string; text: string }[] = state.history.map((t) => ({ label: `turn ${t.turn + 1}`, text: this.historyText(t) }));
    // The compact observation leaves the program out: its printed moves are the proposal line (a byte-level model
    // would read a ~450-character program before every answer).
    if (seat === 'executor' && state.proposal?.tool && this.config.observation !== 'compact') {
      context.push({ label: 'proposer program', text: toolDetailsText(state.proposal.tool) });
    }
    if (seat === 'executor' && state.proposal) context.push({ label: 'proposal', text: this.proposalText(state.proposal) });
    return deepFreeze({
      task: this.taskText(seat),
      state: this.stateText(state),
      context,
      turn: state.turn,
      data: {
        size: state.instance.size, grid: [...state.instance.grid], goals: state.instance.goals.map((p) => ({ ...p })),
        player: { ...state.placement.player }, boxes: state.placement.boxes.map((p) => ({ ...p })), movesUsed: state.movesUsed,
        proposal: seat === 'executor' && state.proposal ? state.proposal : null,
      },
    });
  }

  /** {@inheritDoc Environment.step} */
  step(state: SokobanState, seat: string, move: Move<Direction[]>): StepResult<SokobanState> {
    const index = this.seatIndexOf(seat);
    if (state.done) throw new Error(`${SOKOBAN_ID}: step called on a finished episode (seat ${seat}, turn ${state.turn})`);
    if (index !== state.seatIndex) {
      throw new Error(`${SOKOBAN_ID}: it is ${this.seats[state.seatIndex]?.name}'s move in turn ${state.turn}, not ${seat}'s`);
    }
    const { config } = this;
    const board: Board = state.instance;
    const penalty = config.reward === 'sparse' ? 0 : config.malformedPenalty;
    const parsed = movesOf(move, config.maxMoves);
    if (seat === 'proposer') {
      let proposal: ProposalRecord;
      if ('error' in parsed) {
        proposal = { moves: null, error: parsed.error, end: state.placement, solves: false, invalid: 0, deadlocked: [], reward: penalty };
      } else {
        const sim = runMoves(board, state.placement, parsed.moves, config.reward, config.potential);
        proposal = {
          moves: parsed.moves.slice(), end: sim.end, solves: sim.solved, invalid: sim.invalid,
          deadlocked: cornerDeadlocks(board, sim.end.boxes), reward: sim.reward,
        };
      }
      const tool = toolDetailsOf(move.details);
      if (tool) proposal = { ...proposal, tool };
      const next = deepFreeze({ ...state, seatIndex: 1, proposal });
      return deepFreeze({
        state: next,
        done: { terminated: false, truncated: false },
        success: false,
        signals: { proposal_reward: proposal.reward, executed_reward: 0, success: 0, malformed: 'error' in parsed ? 1 : 0 },
        info: { proposal },
      });
    }
    // null only in the single-seat variant: the proposer seat acts before the executor in every team turn
    const proposal: ProposalRecord | null = state.proposal;
    let record: TurnRecord;
    if ('error' in parsed) {
      record = {
        turn: state.turn, proposal, executed: null, error: parsed.error, from: state.placement, to: state.placement,
        invalid: 0, pushes: 0, ignored: 0, reward: penalty,
      };
    } else {
      const run = runMoves(board, state.placement, parsed.moves, config.reward, config.potential);
      record = {
        turn: state.turn, proposal, executed: parsed.moves.slice(), from: state.placement, to: run.end, invalid: run.invalid,
        pushes: run.pushes, ignored: run.ignored, reward: run.reward,
      };
    }
    const success = isSolved(board, record.to.boxes);
    const deadlocked = success ? [] : cornerDeadlocks(board, record.to.boxes);
    const stuck = config.deadlockTermination && deadlocked.length > 0;
    const terminated = success || stuck;
    const truncated = !terminated && state.turn + 1 >= this.maxTurns;
    const next: SokobanState = deepFreeze({
      instance: state.instance,
      placement: record.to,
      turn: state.turn + 1,
      seatIndex: 0,
      movesUsed: state.movesUsed + (record.executed ? record.executed.length - record.ignored : 0),
      proposal: null,
      history: [...state.history, record],
      success,
      deadlocked,
      done: terminated || truncated,
    });
    return deepFreeze({
      state: next,
      done: { terminated, truncated },
      success,
      signals: { proposal_reward: 0, executed_reward: record.reward, success: success ? 1 : 0, malformed: 'error' in parsed ? 1 : 0 },
      info: { ...record, deadlocked },
    });
  }

  /**
   * A shortest solution (BFS, directions tried U, D, L, R) from the current placement, for either seat, cut to
   * `maxMoves`; `[]` when solved already, deadlocked, unsolvable, or beyond `oracleNodeCap`.
   */
  oracle(state: SokobanState, seat: string): Direction[] {
    this.seatIndexOf(seat);
    const result = solve(state.instance, state.placement, this.config.oracleNodeCap);
    return result.status === 'solved' ? result.moves.slice(0, this.config.maxMoves) : [];
  }

  /**
   * The oracle as a Python program that prints exactly {@link SokobanEnvironment.oracle}'s moves (the coder's
   * demonstrations when it plays the proposer); `undefined` for another language and where the oracle has no moves
   * (solved, deadlocked, unsolvable, beyond `oracleNodeCap`).
   */
  oracleProgram(state: SokobanState, seat: string, language: ProgramLanguage): string | undefined {
    if (this.oracle(state, seat).length === 0) return undefined;
    const { maxMoves, floorSymbol: floor } = this.config;
    return sokobanOracleProgram(state.instance, state.placement, { maxMoves, floor }, language);
  }

  /** 1 to min(maxMoves, 2·size) uniformly random moves. */
  randomAction(state: SokobanState, seat: string, rng: Rng): Direction[] {
    this.seatIndexOf(seat);
    const n = 1 + rng.int(Math.min(this.config.maxMoves, 2 * state.instance.size));
    return Array.from({ length: n }, () => DIRECTIONS[rng.int(4)]!);
  }
}

/** The config schema file, read once (shipped in `schemas/`). */
export const SOKOBAN_CONFIG_SCHEMA: JsonSchema = JSON.parse(
  readFileSync(new URL('../schemas/sokoban.config.json', import.meta.url), 'utf8'),
) as JsonSchema;

/** The `sokoban-v0` contribution. */
export class SokobanContribution implements EnvironmentContribution {
  /** {@inheritDoc EnvironmentContribution.id} */
  readonly id = SOKOBAN_ID;
  /** {@inheritDoc EnvironmentContribution.description} */
  readonly description = 'Sokoban: push every box onto a goal; a proposer proposes a move list, an executor executes one';
  /** {@inheritDoc EnvironmentContribution.configSchema} */
  readonly configSchema = SOKOBAN_CONFIG_SCHEMA;
  /** {@inheritDoc EnvironmentContribution.create} */
  create(config: Record<string, unknown>): SokobanEnvironment {
    return new SokobanEnvironment(config);
  }
}
