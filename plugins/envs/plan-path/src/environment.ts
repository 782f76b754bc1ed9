/**
 * `plan-path-v0`: the Plan-Path environment with the proposer/executor game-team workflow (as in the Stronger-MAS paper).
 * With `seats: ['executor']` it is the single-agent baseline: the executor plays alone, with no proposal.
 */
import type { EnvironmentContribution, ProgramLanguage, Split } from '@troupe/kernel';
import { injectable } from '@troupe/kernel';
import type { MovesProposal, MovesState, MovesTurn, Settled } from '@troupe/game-kit';
import { GAME_SIGNALS, MOVES_LEGEND, MovesGame, TEAM_SEATS, compactPos } from '@troupe/game-kit';
import type { PlanPathConfig } from './config.js';
import { PLAN_PATH_CONFIG_SCHEMA, resolvePlanPathConfig } from './config.js';
import type { RunOutcome } from './dynamics.js';
import { runMoves } from './dynamics.js';
import type { Direction, Pos } from './grid.js';
import { canonicalPath, formatPos, renderGrid, samePos } from './grid.js';
import type { PlanPathInstance } from './instance.js';
import { generateInstance, planPathInstanceKey } from './instance.js';
import { planPathOracleProgram } from './oracle-program.js';

export { movesSchema } from '@troupe/game-kit';

/** The contribution id. */
export const PLAN_PATH_ID = 'plan-path-v0';

/** The seats of the team, in turn order (`config.seats` may keep only the executor). */
export const PLAN_PATH_SEATS = TEAM_SEATS;

/** The signal names every step returns (see the README for their meaning). */
export const PLAN_PATH_SIGNALS = GAME_SIGNALS;

/** The proposer's proposal of the current turn, simulated on a copy of the state (the walker's `end` position). */
export interface ProposalRecord extends MovesProposal<Pos> {
  /** Whether the simulation reaches the goal. */
  readonly reachesGoal: boolean;
}

/** What happened in one finished turn: the walker's positions `from` and `to`. */
export type TurnRecord = MovesTurn<Pos, ProposalRecord>;

/** A Plan-Path state: a plain, deeply frozen value. `step` returns a new one. */
export interface PlanPathState extends MovesState<PlanPathInstance, ProposalRecord, TurnRecord> {
  /** Where the walker is NOW. */
  readonly position: Pos;
}

/** `(+2,-1)`: the goal's offset from the walker in rows and columns, signed, for the compact observation. */
function compactOffset(from: Pos, to: Pos): string {
  const signed = (n: number): string => (n > 0 ? `+${n}` : String(n));
  return `(${signed(to.row - from.row)},${signed(to.col - from.col)})`;
}

/** The Plan-Path environment for one config. */
export class PlanPathEnvironment extends MovesGame<PlanPathState, RunOutcome & { solved: boolean }, PlanPathConfig> {
  protected override readonly executorSees = 'where it would end';

  /** Builds the environment; `config` is filled with defaults and range-checked. */
  constructor(config: Record<string, unknown> = {}) {
    super(PLAN_PATH_ID, resolvePlanPathConfig(config));
  }

  /** {@inheritDoc Environment.instance} */
  instance(split: Split, index: number, seed: number): PlanPathInstance {
    return generateInstance(split, index, seed, this.config);
  }

  /** {@inheritDoc Environment.instanceKey} */
  override instanceKey(instance: PlanPathInstance): string {
    return planPathInstanceKey(instance);
  }

  /** Grid rows, start, goal, shortest length and the oracle path. */
  describe(instance: PlanPathInstance): Record<string, unknown> {
    return {
      size: instance.size,
      grid: [...instance.grid],
      start: { ...instance.start },
      goal: { ...instance.goal },
      shortest: instance.shortest,
      oraclePath: canonicalPath(instance.grid, instance.start, instance.goal) ?? [],
      picture: renderGrid(instance.grid, { agent: instance.start, goal: instance.goal }),
    };
  }

  /** {@inheritDoc Environment.reset} */
  reset(instance: PlanPathInstance): PlanPathState {
    return this.start(instance, { position: instance.start, movesUsed: 0 }, samePos(instance.start, instance.goal));
  }

  /** The task statement for a seat. */
  taskText(seat: string): string {
    const { size } = this.config;
    return [
      `Plan-Path: move the walker A to the goal G on a ${size}x${size} grid.`,
      'Legend: A walker (current position), G goal, * walker on the goal, # wall, . free cell.',
      ...MOVES_LEGEND,
      'A move into a wall or off the grid is invalid: the walker stays where it is. ' +
        (this.config.movesAfterGoal === 'penalized'
          ? 'Moves after the goal is reached are not made and cost as much as invalid moves.'
          : 'Moves after the goal is reached are ignored.'),
      this.turnsLine(),
      ...this.closingLines(seat, 'takes the walker to the goal'),
    ].join('\n');
  }

  /** The current state as text: turn, moves used, positions and the grid with the walker where it is NOW. */
  stateText(state: PlanPathState): string {
    const { instance } = state;
    if (this.config.observation === 'compact') {
      return [
        `A=${compactPos(state.position)} G=${compactPos(instance.goal)} d=${compactOffset(state.position, instance.goal)}`,
        renderGrid(instance.grid, { agent: state.position, goal: instance.goal, coordinates: false }).replaceAll(
          ' ',
          '',
        ),
      ].join('\n');
    }
    return [
      `${this.turnLine(state)} Moves used so far: ${state.movesUsed}.`,
      `Walker A at ${formatPos(state.position)}. Goal G at ${formatPos(instance.goal)}.${state.success ? ' The walker is on the goal.' : ''}`,
      renderGrid(instance.grid, { agent: state.position, goal: instance.goal }),
    ].join('\n');
  }

  /** The proposal as the executor is shown it. */
  proposalText(p: ProposalRecord, state: Pick<PlanPathState, 'position'>): string {
    if (this.config.observation === 'compact') {
      if (!p.moves) return 'none';
      return `${this.formatMoves(p.moves)} -> ${compactPos(p.end)} ${p.reachesGoal ? 'goal' : 'miss'}${p.invalid ? ` ${p.invalid} invalid` : ''}`;
    }
    if (!p.moves)
      return `The proposer's answer could not be parsed (${p.error ?? 'unparseable'}); there is no proposal.`;
    const outcome = p.reachesGoal ? 'reaches the goal' : 'does not reach the goal';
    return (
      `Proposed moves: ${this.formatMoves(p.moves)}\nSimulated from ${formatPos(state.position)}: ends at ${formatPos(p.end)}, ${outcome}` +
      `, ${p.invalid} invalid move${p.invalid === 1 ? '' : 's'}.`
    );
  }

  /** One finished turn as a context block. */
  historyText(t: TurnRecord): string {
    if (this.config.observation === 'compact') {
      return `${t.proposal ? `${this.compactMoves(t.proposal.moves)} ` : ''}${this.compactMoves(t.executed)} ${compactPos(t.from)}->${compactPos(t.to)}${t.invalid ? ` ${t.invalid} invalid` : ''}`;
    }
    const proposed = t.proposal
      ? `proposed ${t.proposal.moves ? this.formatMoves(t.proposal.moves) : 'unparseable'}; `
      : '';
    const executed = t.executed
      ? this.formatMoves(t.executed)
      : `unparseable (${t.error ?? ''}), the walker did not move`;
    return (
      `Turn ${t.turn + 1}: ${proposed}executed ${executed}; walker ${formatPos(t.from)} -> ${formatPos(t.to)}` +
      `${t.invalid ? `, ${t.invalid} invalid` : ''}.`
    );
  }

  protected observationData(state: PlanPathState): Record<string, unknown> {
    const { instance } = state;
    return {
      size: instance.size,
      grid: [...instance.grid],
      position: { ...state.position },
      goal: { ...instance.goal },
      movesUsed: state.movesUsed,
    };
  }

  protected where(state: PlanPathState): Pos {
    return state.position;
  }

  protected run(state: PlanPathState, moves: readonly Direction[]): RunOutcome & { solved: boolean } {
    const { reward, movesAfterGoal, potential } = this.config;
    const run = runMoves(state.instance, state.position, state.movesUsed, moves, reward, movesAfterGoal, potential);
    return { ...run, solved: run.reachedGoal };
  }

  protected proposalFields(
    _state: PlanPathState,
    run: { solved: boolean } | null,
  ): Pick<ProposalRecord, 'reachesGoal'> {
    return { reachesGoal: run?.solved ?? false };
  }

  protected override proposalInfo(state: PlanPathState): Record<string, unknown> {
    return { from: state.position };
  }

  protected settle(state: PlanPathState, record: TurnRecord, movesUsed: number): Settled<PlanPathState, TurnRecord> {
    return { success: samePos(record.to, state.instance.goal), next: { position: record.to, movesUsed } };
  }

  /** The canonical shortest path (fewest turns, see `canonicalPath`) from the current position, cut to `maxMoves`; `[]` when already on the goal. */
  protected solve(state: PlanPathState): Direction[] {
    return (canonicalPath(state.instance.grid, state.position, state.instance.goal) ?? []).slice(
      0,
      this.config.maxMoves,
    );
  }

  /** The oracle as a Python program that prints exactly the oracle's moves; `undefined` for another language, and on the goal. */
  protected override oracleSource(state: PlanPathState, language: ProgramLanguage): string | undefined {
    return planPathOracleProgram(
      state.instance.grid,
      state.position,
      state.instance.goal,
      this.config.maxMoves,
      language,
    );
  }
}

/** The `plan-path-v0` contribution. */
@injectable()
export class PlanPathContribution implements EnvironmentContribution {
  readonly id = PLAN_PATH_ID;
  readonly description =
    'Plan-Path: walk a grid to the goal; a proposer proposes a move list, an executor executes one';
  readonly configSchema = PLAN_PATH_CONFIG_SCHEMA;
  create(config: Record<string, unknown>): PlanPathEnvironment {
    return new PlanPathEnvironment(config);
  }
}
