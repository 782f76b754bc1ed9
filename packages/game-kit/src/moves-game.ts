/**
 * Grid games played with the `moves` action type (Plan-Path, Sokoban, community mazes): both seats answer with a
 * list of U / D / L / R moves; the proposer's list is simulated, the executor's executed. {@link MovesGame} adds to
 * the proposer/executor skeleton the action type, the seat texts, parsing with the malformed penalty, the proposal
 * and turn records of a move list (a game adds its own fields), the moves used, the notation of move lists in
 * observations, the task-text lines about moves, and random move lists. A game states where things are
 * ({@link MovesGame.where}), how a list runs from there ({@link MovesGame.run}) and what a turn leaves
 * ({@link MovesGame.settle}).
 */
import type { Move, Rng } from '@troupe/kernel';
import type { ConfigReader, GameConfig, RewardKind } from './config.js';
import type { Executed, GameState, ProposalBase, ProposalOf, Proposed, TurnBase, TurnOf } from './game.js';
import { ProposerExecutorGame } from './game.js';
import type { Direction, MoveNotation } from './moves.js';
import { DIRECTIONS, MOVES_ACTION_TYPE, MOVE_NOTATIONS, formatMoveList, movesOf, movesSchema } from './moves.js';
import { roundReward } from './values.js';

/** The config keys of a moves game, beyond {@link GameConfig}. */
export interface MovesGameConfig extends GameConfig {
  /** Most moves in one list (the `moves` action type's `maxItems`). */
  readonly maxMoves: number;
  /** Shaped reward of a move list that could not be used (the sparse variant gives 0). */
  readonly malformedPenalty: number;
  /** How observations write move lists: `moves` `[U,U,R]` or `runs` `[U2,R1]` (match the planner role's). */
  readonly notation: MoveNotation;
}

/** The {@link MovesGameConfig} keys, checked: the game's keys, maxMoves 1..`maxMovesLimit`, malformedPenalty, notation. */
export function readMovesGameConfig(r: ConfigReader, maxMovesLimit: number): MovesGameConfig {
  return {
    ...r.game(),
    maxMoves: r.integer('maxMoves', 1, maxMovesLimit),
    malformedPenalty: r.finite('malformedPenalty'),
    notation: r.oneOf('notation', MOVE_NOTATIONS),
  };
}

/** The task-text lines every moves game states: coordinates and what each move does. */
export const MOVES_LEGEND: readonly string[] = Object.freeze([
  'Coordinates are (row, col): row 0 is the top row, col 0 the left column.',
  'Moves: U = up (row - 1), D = down (row + 1), L = left (col - 1), R = right (col + 1).',
]);

/** What a move list did when run from where things are (a game's run adds its own counts). */
export interface MovesRun<W> {
  /** Where things end. */
  readonly end: W;
  /** Moves that could not be made (nothing moved). */
  readonly invalid: number;
  /** Moves after the task was solved, not executed. */
  readonly ignored: number;
  /** Whether the task is solved at the end. */
  readonly solved: boolean;
  /** The list's reward. */
  readonly reward: number;
}

/** What {@link runMoveList} returns: the run, the moves processed and the per-move shaped rewards, not yet rounded. */
export interface MoveListRun<W> {
  /** Where things end. */
  readonly end: W;
  /** Moves processed (a list stops once the task is solved). */
  readonly processed: number;
  /** Processed moves that could not be made (nothing moved). */
  readonly invalid: number;
  /** Moves after the task was solved, not executed. */
  readonly ignored: number;
  /** Whether the task is solved at the end. */
  readonly solved: boolean;
  /** The shaped reward of each processed move, in order. */
  readonly perMove: number[];
}

/**
 * Runs `moves` from `start`, one `move` at a time, until the list ends or `solved` holds (later moves are ignored).
 * `move(at, dir, i)` says where move `i` leads (`at` itself when it cannot be made), whether it could, and its shaped
 * reward. The inputs are never modified: the proposer's list is simulated, the executor's executed, the same way.
 */
export function runMoveList<W>(
  start: W,
  moves: readonly Direction[],
  solved: (at: W) => boolean,
  move: (at: W, dir: Direction, index: number) => { readonly to: W; readonly valid: boolean; readonly reward: number },
): MoveListRun<W> {
  let at = start;
  let invalid = 0;
  const perMove: number[] = [];
  let done = solved(at);
  for (const dir of moves) {
    if (done) break;
    const m = move(at, dir, perMove.length);
    if (!m.valid) invalid++;
    perMove.push(m.reward);
    at = m.to;
    done = solved(at);
  }
  return { end: at, processed: perMove.length, invalid, ignored: moves.length - perMove.length, solved: done, perMove };
}

/**
 * The reward of a move list: sparse, 1 when solved and 0 otherwise; shaped, the sum of `perMove`. Rounded to 9
 * decimals, like each per-move reward returned, so that mathematically equal rewards compare equal.
 */
export function moveListReward(
  perMove: readonly number[],
  solved: boolean,
  kind: RewardKind,
): { readonly reward: number; readonly perMove: number[] } {
  const shaped = roundReward(perMove.reduce((a, b) => a + b, 0));
  return { reward: kind === 'sparse' ? (solved ? 1 : 0) : shaped, perMove: perMove.map(roundReward) };
}

/** The proposal record of a moves game (`W`: where things are, a position or a placement). */
export interface MovesProposal<W> extends ProposalBase {
  /** The proposed moves, or `null` when the proposer's answer could not be used. */
  readonly moves: readonly Direction[] | null;
  /** Why it could not be used. */
  readonly error?: string;
  /** Where the simulation ends (where things are now when it could not be used). */
  readonly end: W;
  /** Invalid moves in the simulation. */
  readonly invalid: number;
}

/** The turn record of a moves game. */
export interface MovesTurn<W, P extends ProposalBase> extends TurnBase<P> {
  /** The executed moves (`null` when the executor's answer could not be used). */
  readonly executed: readonly Direction[] | null;
  /** Why the executor's answer could not be used. */
  readonly error?: string;
  /** Where things were before execution. */
  readonly from: W;
  /** Where things are after execution. */
  readonly to: W;
  /** Invalid executed moves. */
  readonly invalid: number;
  /** Executed-list moves ignored because the task was solved. */
  readonly ignored: number;
}

/** The state of a moves game. */
export interface MovesState<I, P extends ProposalBase, T extends TurnBase<P>> extends GameState<I, P, T> {
  /** Moves executed so far in the episode (invalid ones included; ignored ones not). */
  readonly movesUsed: number;
}

/** What a finished turn leaves, as a game's {@link MovesGame.settle} states it. */
export type Settled<S, T> = Omit<Executed<S, T>, 'record' | 'malformed'>;

/** Any state of a moves game: the type a game's state type extends. */
export type AnyMovesState = MovesState<
  { readonly size: number },
  MovesProposal<unknown>,
  MovesTurn<unknown, MovesProposal<unknown>>
>;

/**
 * A moves game for one resolved config; instances have a `size` (random lists are at most 2·size long). The game's
 * state type `S` names its instance, proposal and turn record types; its run type `R` names where things are
 * (`R['end']`).
 */
export abstract class MovesGame<
  S extends AnyMovesState,
  R extends MovesRun<unknown>,
  C extends MovesGameConfig,
> extends ProposerExecutorGame<S, Direction[], C> {
  constructor(id: string, config: C) {
    super(
      id,
      config,
      {
        name: MOVES_ACTION_TYPE,
        schema: movesSchema(config.maxMoves),
        description: `A list of at most ${config.maxMoves} moves, each U, D, L or R.`,
      },
      {
        proposer: 'Proposes a move list; it is simulated on a copy, never executed.',
        executor: 'Sees the proposal and its simulated outcome; its move list is executed.',
        alone: 'Plays alone (single agent): sees the task and the current state; its move list is executed.',
      },
    );
  }

  /** Where things are now (the walker's position, the player's and boxes' placement). */
  protected abstract where(state: S): R['end'];
  /** Runs `moves` from where things are in `state` (never modifying it). */
  protected abstract run(state: S, moves: readonly Direction[]): R;
  /** The game's own fields of a proposal record, from its simulation (`null`: the answer could not be used). */
  protected abstract proposalFields(state: S, run: R | null): Omit<ProposalOf<S>, keyof MovesProposal<R['end']>>;
  /** The game's own fields of the next state, whether the task is solved, and whether the episode stops anyway. */
  protected abstract settle(state: S, record: TurnOf<S>, movesUsed: number): Settled<S, TurnOf<S>>;

  /** The game's own fields of a turn record, from the run (`null`: the answer could not be used). None by default. */
  protected turnFields(_run: R | null): Omit<TurnOf<S>, keyof MovesTurn<R['end'], ProposalOf<S>>> {
    return {} as Omit<TurnOf<S>, keyof MovesTurn<R['end'], ProposalOf<S>>>;
  }

  /** Extra `info` of a proposer's step. None by default. */
  protected proposalInfo(_state: S): Readonly<Record<string, unknown>> | undefined {
    return undefined;
  }

  /** The moves of a seat's answer, or why they cannot be used and the reward that costs. */
  protected parse(
    move: Move<Direction[]>,
  ): { readonly moves: Direction[] } | { readonly error: string; readonly reward: number } {
    const parsed = movesOf(move, this.config.maxMoves);
    if ('error' in parsed)
      return { error: parsed.error, reward: this.config.reward === 'sparse' ? 0 : this.config.malformedPenalty };
    return { moves: parsed.moves.slice() };
  }

  protected propose(state: S, move: Move<Direction[]>): Proposed<ProposalOf<S>> {
    const parsed = this.parse(move);
    const run = 'error' in parsed ? null : this.run(state, parsed.moves);
    const proposal =
      run && !('error' in parsed)
        ? { moves: parsed.moves, end: run.end, invalid: run.invalid, reward: run.reward }
        : {
            moves: null,
            error: (parsed as { error: string }).error,
            end: this.where(state),
            invalid: 0,
            reward: (parsed as { reward: number }).reward,
          };
    const info = this.proposalInfo(state);
    return {
      proposal: { ...proposal, ...this.proposalFields(state, run) } as Omit<ProposalOf<S>, 'tool'>,
      malformed: !run,
      ...(info ? { info } : {}),
    };
  }

  protected execute(state: S, move: Move<Direction[]>): Executed<S, TurnOf<S>> {
    const parsed = this.parse(move);
    const from = this.where(state);
    const run = 'error' in parsed ? null : this.run(state, parsed.moves);
    const base = { turn: state.turn, proposal: state.proposal, from };
    const record = (run && !('error' in parsed)
      ? {
          ...base,
          executed: parsed.moves,
          to: run.end,
          invalid: run.invalid,
          ignored: run.ignored,
          reward: run.reward,
          ...this.turnFields(run),
        }
      : {
          ...base,
          executed: null,
          error: (parsed as { error: string }).error,
          to: from,
          invalid: 0,
          ignored: 0,
          reward: (parsed as { reward: number }).reward,
          ...this.turnFields(null),
        }) as unknown as TurnOf<S>;
    const movesUsed = state.movesUsed + (run ? record.executed!.length - record.ignored : 0);
    return { ...this.settle(state, record, movesUsed), record, malformed: !run };
  }

  /** A move list as observations write it, in the configured notation. */
  formatMoves(moves: readonly Direction[]): string {
    return formatMoveList(moves, this.config.notation);
  }

  /** A move list or `none`, for the compact observation. */
  protected compactMoves(moves: readonly Direction[] | null): string {
    return moves ? this.formatMoves(moves) : 'none';
  }

  /** The seat's duty line, then the answer line (the last two lines of the task). */
  protected closingLines(seat: string, goal: string): string[] {
    return [
      this.duty(seat, {
        alone: 'You play alone: give the move list that is executed.',
        proposer: `You are the proposer: propose a move list that ${goal}. It is simulated on a copy and shown to the executor; it is not executed.`,
        executor: `You are the executor: you see the proposer's list and ${this.executorSees}. Give the move list that is actually executed (copy the proposal if it is right, fix it if not).`,
      }),
      `Answer with a list of at most ${this.config.maxMoves} moves.`,
    ];
  }

  /** What the executor's duty line says it sees with the proposal. */
  protected readonly executorSees: string = 'its simulated outcome';

  /** 1 to min(maxMoves, 2·size) uniformly random moves. */
  protected random(state: S, rng: Rng): Direction[] {
    const n = 1 + rng.int(Math.min(this.config.maxMoves, 2 * state.instance.size));
    return Array.from({ length: n }, () => DIRECTIONS[rng.int(4)]!);
  }
}
