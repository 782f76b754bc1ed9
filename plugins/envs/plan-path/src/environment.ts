/**
 * `plan-path-v0`: the Plan-Path environment with the proposer/executor game-team workflow (as in the Stronger-MAS paper).
 * With `seats: ['executor']` it is the single-agent baseline: the executor plays alone, with no proposal.
 */
import { readFileSync } from 'node:fs';
import type {
  ActionTypeSpec, Environment, EnvironmentContribution, JsonSchema, Move, Observation, ProgramLanguage, Rng, SeatSpec, Split,
  StepResult, ToolDetails,
} from '@troupe/kernel';
import { formatMoveList, movesOf, movesSchema, toolDetailsOf, toolDetailsText } from '@troupe/kernel';
import type { PlanPathConfig } from './config.js';
import { resolvePlanPathConfig } from './config.js';
import { runMoves } from './dynamics.js';
import type { Direction, Pos } from './grid.js';
import { DIRECTIONS, canonicalPath, formatPos, renderGrid, samePos } from './grid.js';
import type { PlanPathInstance } from './instance.js';
import { generateInstance, planPathInstanceKey } from './instance.js';
import { planPathOracleProgram } from './oracle-program.js';

/** The contribution id. */
export const PLAN_PATH_ID = 'plan-path-v0';

/** The seats of the team, in turn order (`config.seats` may keep only the executor). */
export const PLAN_PATH_SEATS = Object.freeze(['proposer', 'executor'] as const);

/** A seat name of Plan-Path. */
export type PlanPathSeat = (typeof PLAN_PATH_SEATS)[number];

/** The signal names every step returns (see the README for their meaning). */
export const PLAN_PATH_SIGNALS = Object.freeze(['proposal_reward', 'executed_reward', 'success', 'malformed'] as const);

/** The proposer's proposal of the current turn, simulated on a copy of the state. */
export interface ProposalRecord {
  /** The proposed moves, or `null` when the proposer's text did not parse. */
  readonly moves: readonly Direction[] | null;
  /** Why it did not parse (when `moves` is `null`). */
  readonly error?: string;
  /** Where the simulated walker ends (the current position when unparseable). */
  readonly end: Pos;
  /** Whether the simulation reaches the goal. */
  readonly reachesGoal: boolean;
  /** Invalid moves in the simulation. */
  readonly invalid: number;
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
  /** The executed moves (`null` when the executor's text did not parse). */
  readonly executed: readonly Direction[] | null;
  /** Why the executor's text did not parse. */
  readonly error?: string;
  /** Position before execution. */
  readonly from: Pos;
  /** Position after execution. */
  readonly to: Pos;
  /** Invalid executed moves. */
  readonly invalid: number;
  /** Executed-list moves ignored because the goal was reached. */
  readonly ignored: number;
  /** The executed reward. */
  readonly reward: number;
}

/** A Plan-Path state: a plain, deeply frozen value. `step` returns a new one. */
export interface PlanPathState {
  /** The task. */
  readonly instance: PlanPathInstance;
  /** Where the walker is NOW. */
  readonly position: Pos;
  /** The current turn (0-based). */
  readonly turn: number;
  /** Index in the environment's `seats` (the configured seats) of the seat that acts next. */
  readonly seatIndex: number;
  /** Moves executed so far in the episode (invalid ones included; ignored ones not). */
  readonly movesUsed: number;
  /** This turn's proposal, once the proposer has acted. */
  readonly proposal: ProposalRecord | null;
  /** Finished turns, oldest first. */
  readonly history: readonly TurnRecord[];
  /** Whether the walker is on the goal. */
  readonly success: boolean;
  /** Whether the episode is over (success, or the turn limit). */
  readonly done: boolean;
}

export { movesSchema } from '@troupe/kernel';

/** `(r,c)`: a position without the space, for the compact observation. */
function compactPos(pos: Pos): string {
  return `(${pos.row},${pos.col})`;
}

/** `(+2,-1)`: the goal's offset from the walker in rows and columns, signed, for the compact observation. */
function compactOffset(from: Pos, to: Pos): string {
  const signed = (n: number): string => (n > 0 ? `+${n}` : String(n));
  return `(${signed(to.row - from.row)},${signed(to.col - from.col)})`;
}

/** Deep-freezes a plain value (objects and arrays), returning it. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

/** The Plan-Path environment for one config. */
export class PlanPathEnvironment implements Environment<PlanPathInstance, PlanPathState, Direction[]> {
  /** {@inheritDoc Environment.id} */
  readonly id = PLAN_PATH_ID;
  /** The resolved config. */
  readonly config: PlanPathConfig;
  /** {@inheritDoc Environment.seats} */
  readonly seats: readonly SeatSpec[];
  /** {@inheritDoc Environment.actionTypes} */
  readonly actionTypes: readonly ActionTypeSpec[];
  /** {@inheritDoc Environment.maxTurns} */
  readonly maxTurns: number;
  /** The signals every step returns: `proposal_reward`, `executed_reward`, `success`, `malformed` (see the README). */
  readonly signals: readonly string[] = PLAN_PATH_SIGNALS;

  /** Builds the environment; `config` is filled with defaults and range-checked. */
  constructor(config: Record<string, unknown> = {}) {
    this.config = resolvePlanPathConfig(config);
    this.maxTurns = this.config.maxTurns;
    const team = this.config.seats.length === 2;
    this.seats = deepFreeze([
      { name: 'proposer', actionType: 'moves', description: 'Proposes a move list; it is simulated on a copy, never executed.' },
      team
        ? { name: 'executor', actionType: 'moves', description: 'Sees the proposal and its simulated outcome; its move list is executed.' }
        : { name: 'executor', actionType: 'moves', description: 'Plays alone (single agent): sees the task and the current state; its move list is executed.' },
    ].filter((s) => this.config.seats.includes(s.name as PlanPathSeat)));
    this.actionTypes = deepFreeze([
      { name: 'moves', schema: movesSchema(this.config.maxMoves), description: `A list of at most ${this.config.maxMoves} moves, each U, D, L or R.` },
    ]);
  }

  /** {@inheritDoc Environment.instance} */
  instance(split: Split, index: number, seed: number): PlanPathInstance {
    return generateInstance(split, index, seed, this.config);
  }

  /** {@inheritDoc Environment.instanceKey} */
  instanceKey(instance: PlanPathInstance): string {
    return planPathInstanceKey(instance);
  }

  /** Grid rows, start, goal, shortest length and the oracle path. */
  describe(instance: PlanPathInstance): Record<string, unknown> {
    const path = canonicalPath(instance.grid, instance.start, instance.goal) ?? [];
    return {
      size: instance.size,
      grid: [...instance.grid],
      start: { ...instance.start },
      goal: { ...instance.goal },
      shortest: instance.shortest,
      oraclePath: path,
      picture: renderGrid(instance.grid, { agent: instance.start, goal: instance.goal }),
    };
  }

  /** {@inheritDoc Environment.reset} */
  reset(instance: PlanPathInstance): PlanPathState {
    return deepFreeze({
      instance, position: instance.start, turn: 0, seatIndex: 0, movesUsed: 0, proposal: null, history: [],
      success: samePos(instance.start, instance.goal), done: false,
    });
  }

  private seatIndexOf(seat: string): number {
    const names = this.seats.map((s) => s.name);
    const i = names.indexOf(seat);
    if (i < 0) {
      throw new Error(`${PLAN_PATH_ID}: unknown seat "${seat}"; the seats are ${names.join(', ')}`
        + `${names.length < PLAN_PATH_SEATS.length ? ' (config.seats is ["executor"]: the single-agent variant)' : ''}`);
    }
    return i;
  }

  /** The task statement for a seat. */
  taskText(seat: string): string {
    const { size, maxTurns, maxMoves } = this.config;
    const alone = this.seats.length === 1;
    const duty = alone
      ? 'You play alone: give the move list that is executed.'
      : seat === 'proposer'
        ? 'You are the proposer: propose a move list that takes the walker to the goal. It is simulated on a copy and shown to the executor; it is not executed.'
        : 'You are the executor: you see the proposer\'s list and where it would end. Give the move list that is actually executed (copy the proposal if it is right, fix it if not).';
    return [
      `Plan-Path: move the walker A to the goal G on a ${size}x${size} grid.`,
      'Legend: A walker (current position), G goal, * walker on the goal, # wall, . free cell.',
      'Coordinates are (row, col): row 0 is the top row, col 0 the left column.',
      'Moves: U = up (row - 1), D = down (row + 1), L = left (col - 1), R = right (col + 1).',
      'A move into a wall or off the grid is invalid: the walker stays where it is. ' +
        (this.config.movesAfterGoal === 'penalized' ? 'Moves after the goal is reached are not made and cost as much as invalid moves.' : 'Moves after the goal is reached are ignored.'),
      alone ? `You have at most ${maxTurns} turns.` : `The team has at most ${maxTurns} turns; each turn the proposer speaks first, then the executor.`,
      duty,
      `Answer with a list of at most ${maxMoves} moves.`,
    ].join('\n');
  }

  /** The current state as text: turn, moves used, positions and the grid with the walker where it is NOW. */
  stateText(state: PlanPathState): string {
    const { instance } = state;
    if (this.config.observation === 'compact') {
      return [
        `A=${compactPos(state.position)} G=${compactPos(instance.goal)} d=${compactOffset(state.position, instance.goal)}`,
        renderGrid(instance.grid, { agent: state.position, goal: instance.goal, coordinates: false }).replaceAll(' ', ''),
      ].join('\n');
    }
    return [
      `Turn ${Math.min(state.turn, this.maxTurns - 1) + 1} of ${this.maxTurns}. Moves used so far: ${state.movesUsed}.`,
      `Walker A at ${formatPos(state.position)}. Goal G at ${formatPos(instance.goal)}.${state.success ? ' The walker is on the goal.' : ''}`,
      renderGrid(instance.grid, { agent: state.position, goal: instance.goal }),
    ].join('\n');
  }

  /** A move list as observations write it, in the configured notation. */
  formatMoves(moves: readonly Direction[]): string {
    return formatMoveList(moves, this.config.notation);
  }

  /** The proposal as the executor is shown it. */
  proposalText(p: ProposalRecord, from: Pos): string {
    if (this.config.observation === 'compact') {
      if (!p.moves) return 'none';
      return `${this.formatMoves(p.moves)} -> ${compactPos(p.end)} ${p.reachesGoal ? 'goal' : 'miss'}${p.invalid ? ` ${p.invalid} invalid` : ''}`;
    }
    if (!p.moves) return `The proposer's answer could not be parsed (${p.error ?? 'unparseable'}); there is no proposal.`;
    const outcome = p.reachesGoal ? 'reaches the goal' : 'does not reach the goal';
    return `Proposed moves: ${this.formatMoves(p.moves)}\nSimulated from ${formatPos(from)}: ends at ${formatPos(p.end)}, ${outcome}`
      + `, ${p.invalid} invalid move${p.invalid === 1 ? '' : 's'}.`;
  }

  private historyText(t: TurnRecord): string {
    if (this.config.observation === 'compact') {
      const moves = (m: readonly Direction[] | null): string => (m ? this.formatMoves(m) : 'none');
      return `${t.proposal ? `${moves(t.proposal.moves)} ` : ''}${moves(t.executed)} ${compactPos(t.from)}->${compactPos(t.to)}${t.invalid ? ` ${t.invalid} invalid` : ''}`;
    }
    const proposed = t.proposal ? `proposed ${t.proposal.moves ? this.formatMoves(t.proposal.moves) : 'unparseable'}; ` : '';
    const executed = t.executed ? this.formatMoves(t.executed) : `unparseable (${t.error ?? ''}), the walker did not move`;
    return `Turn ${t.turn + 1}: ${proposed}executed ${executed}; walker ${formatPos(t.from)} -> ${formatPos(t.to)}`
      + `${t.invalid ? `, ${t.invalid} invalid` : ''}.`;
  }

  /** {@inheritDoc Environment.observe} */
  observe(state: PlanPathState, seat: string): Observation {
    this.seatIndexOf(seat);
    const context: { label: string; text: string }[] = state.history.map((t) => ({ label: `turn ${t.turn + 1}`, text: this.historyText(t) }));
    // The compact observation leaves the program out: its printed moves are the proposal line, and on a byte-level
    // model a ~400-character program would quadruple the executor's prompt.
    if (seat === 'executor' && state.proposal?.tool && this.config.observation !== 'compact') {
      context.push({ label: 'proposer program', text: toolDetailsText(state.proposal.tool) });
    }
    if (seat === 'executor' && state.proposal) context.push({ label: 'proposal', text: this.proposalText(state.proposal, state.position) });
    return deepFreeze({
      task: this.taskText(seat),
      state: this.stateText(state),
      context,
      turn: state.turn,
      data: {
        size: state.instance.size, grid: [...state.instance.grid], position: { ...state.position }, goal: { ...state.instance.goal },
        movesUsed: state.movesUsed, proposal: seat === 'executor' && state.proposal ? state.proposal : null,
      },
    });
  }

  /** {@inheritDoc Environment.step} */
  step(state: PlanPathState, seat: string, move: Move<Direction[]>): StepResult<PlanPathState> {
    const index = this.seatIndexOf(seat);
    if (state.done) throw new Error(`${PLAN_PATH_ID}: step called on a finished episode (seat ${seat}, turn ${state.turn})`);
    if (index !== state.seatIndex) {
      throw new Error(`${PLAN_PATH_ID}: it is ${this.seats[state.seatIndex]?.name}'s move in turn ${state.turn}, not ${seat}'s`);
    }
    const { config } = this;
    const penalty = config.reward === 'sparse' ? 0 : config.malformedPenalty;
    const parsed = movesOf(move, config.maxMoves);
    if (seat === 'proposer') {
      let proposal: ProposalRecord;
      if ('error' in parsed) {
        proposal = { moves: null, error: parsed.error, end: state.position, reachesGoal: false, invalid: 0, reward: penalty };
      } else {
        const sim = runMoves(state.instance, state.position, state.movesUsed, parsed.moves, config.reward, config.movesAfterGoal, config.potential);
        proposal = { moves: parsed.moves.slice(), end: sim.end, reachesGoal: sim.reachedGoal, invalid: sim.invalid, reward: sim.reward };
      }
      const tool = toolDetailsOf(move.details);
      if (tool) proposal = { ...proposal, tool };
      const next = deepFreeze({ ...state, seatIndex: 1, proposal });
      return deepFreeze({
        state: next,
        done: { terminated: false, truncated: false },
        success: false,
        signals: { proposal_reward: proposal.reward, executed_reward: 0, success: 0, malformed: 'error' in parsed ? 1 : 0 },
        info: { proposal, from: state.position },
      });
    }
    // null only in the single-seat variant: the proposer seat acts before the executor in every team turn
    const proposal: ProposalRecord | null = state.proposal;
    let record: TurnRecord;
    if ('error' in parsed) {
      record = { turn: state.turn, proposal, executed: null, error: parsed.error, from: state.position, to: state.position, invalid: 0, ignored: 0, reward: penalty };
    } else {
      const run = runMoves(state.instance, state.position, state.movesUsed, parsed.moves, config.reward, config.movesAfterGoal, config.potential);
      record = {
        turn: state.turn, proposal, executed: parsed.moves.slice(), from: state.position, to: run.end, invalid: run.invalid,
        ignored: run.ignored, reward: run.reward,
      };
    }
    const success = samePos(record.to, state.instance.goal);
    const truncated = !success && state.turn + 1 >= this.maxTurns;
    const next: PlanPathState = deepFreeze({
      instance: state.instance,
      position: record.to,
      turn: state.turn + 1,
      seatIndex: 0,
      movesUsed: state.movesUsed + (record.executed ? record.executed.length - record.ignored : 0),
      proposal: null,
      history: [...state.history, record],
      success,
      done: success || truncated,
    });
    return deepFreeze({
      state: next,
      done: { terminated: success, truncated },
      success,
      signals: { proposal_reward: 0, executed_reward: record.reward, success: success ? 1 : 0, malformed: 'error' in parsed ? 1 : 0 },
      info: { ...record },
    });
  }

  /** The canonical shortest path (fewest turns, see `canonicalPath`) from the current position, cut to `maxMoves`; `[]` when already on the goal. */
  oracle(state: PlanPathState, seat: string): Direction[] {
    this.seatIndexOf(seat);
    return (canonicalPath(state.instance.grid, state.position, state.instance.goal) ?? []).slice(0, this.config.maxMoves);
  }

  /**
   * The oracle as a Python program that prints exactly {@link PlanPathEnvironment.oracle}'s moves (the coder's
   * demonstrations when it plays the proposer); `undefined` for another language, and on the goal.
   */
  oracleProgram(state: PlanPathState, seat: string, language: ProgramLanguage): string | undefined {
    this.seatIndexOf(seat);
    return planPathOracleProgram(state.instance.grid, state.position, state.instance.goal, this.config.maxMoves, language);
  }

  /** 1 to min(maxMoves, 2·size) uniformly random moves. */
  randomAction(state: PlanPathState, seat: string, rng: Rng): Direction[] {
    this.seatIndexOf(seat);
    const n = 1 + rng.int(Math.min(this.config.maxMoves, 2 * state.instance.size));
    return Array.from({ length: n }, () => DIRECTIONS[rng.int(4)]!);
  }
}

/** The config schema file, read once (shipped in `schemas/`). */
export const PLAN_PATH_CONFIG_SCHEMA: JsonSchema = JSON.parse(
  readFileSync(new URL('../schemas/plan-path.config.json', import.meta.url), 'utf8'),
) as JsonSchema;

/** The `plan-path-v0` contribution. */
export class PlanPathContribution implements EnvironmentContribution {
  /** {@inheritDoc EnvironmentContribution.id} */
  readonly id = PLAN_PATH_ID;
  /** {@inheritDoc EnvironmentContribution.description} */
  readonly description = 'Plan-Path: walk a grid to the goal; a proposer proposes a move list, an executor executes one';
  /** {@inheritDoc EnvironmentContribution.configSchema} */
  readonly configSchema = PLAN_PATH_CONFIG_SCHEMA;
  /** {@inheritDoc EnvironmentContribution.create} */
  create(config: Record<string, unknown>): PlanPathEnvironment {
    return new PlanPathEnvironment(config);
  }
}
