/**
 * The proposer/executor game (the Stronger-MAS game team): each turn the proposer's answer is simulated on a copy of
 * the state and shown to the executor, whose answer is applied. With `seats: ['executor']` the executor plays alone.
 *
 * {@link ProposerExecutorGame} owns what every such game shares: the seats and their turn order, the step skeleton
 * (turn checks, the proposal and turn records, the four signals, termination and truncation, deeply frozen results),
 * the observation skeleton (one context block per finished turn, the proposer's program, the proposal) and the
 * task-text lines about turns and duties. A game states its rules in the abstract methods.
 */
import type {
  ActionTypeSpec,
  Environment,
  Move,
  Observation,
  ProgramLanguage,
  Rng,
  SeatSpec,
  Split,
  StepResult,
} from '@troupe/kernel';
import { contentHash } from '@troupe/kernel';
import type { GameConfig } from './config.js';
import { SOLO_SEATS, TEAM_SEATS } from './config.js';
import type { ToolDetails } from './tool-details.js';
import { toolDetailsOf, toolDetailsText } from './tool-details.js';
import { deepFreeze } from './values.js';

/** The signal names every step of a proposer/executor game returns. */
export const GAME_SIGNALS = Object.freeze(['proposal_reward', 'executed_reward', 'success', 'malformed'] as const);

/** What every proposal record holds (the game adds its simulation's outcome). */
export interface ProposalBase {
  /** The simulated reward (the proposer's `proposal_reward`). */
  readonly reward: number;
  /** The program that printed the proposal and its output, when the proposer used a tool (the coder). */
  readonly tool?: ToolDetails;
}

/** What every turn record holds (the game adds what was executed and what it did). */
export interface TurnBase<P extends ProposalBase = ProposalBase> {
  /** The turn index. */
  readonly turn: number;
  /** The proposal of that turn; `null` in the single-seat variant (there is no proposer). */
  readonly proposal: P | null;
  /** The executed reward. */
  readonly reward: number;
}

/** What every state holds (the game adds where things are now). A plain, deeply frozen value. */
export interface GameState<I, P extends ProposalBase, T extends TurnBase<P>> {
  /** The task. */
  readonly instance: I;
  /** The current turn (0-based). */
  readonly turn: number;
  /** Index in the environment's `seats` of the seat that acts next. */
  readonly seatIndex: number;
  /** This turn's proposal, once the proposer has acted. */
  readonly proposal: P | null;
  /** Finished turns, oldest first. */
  readonly history: readonly T[];
  /** Whether the task is solved. */
  readonly success: boolean;
  /** Whether the episode is over. */
  readonly done: boolean;
}

/** The state fields the step skeleton sets itself; a game's `execute` returns the others. */
type Managed = 'instance' | 'turn' | 'seatIndex' | 'proposal' | 'history' | 'success' | 'done';

/** What a game's {@link ProposerExecutorGame.propose} returns. */
export interface Proposed<P> {
  /** The proposal record (the tool details are added by the skeleton). */
  readonly proposal: Omit<P, 'tool'>;
  /** Whether the answer could not be used (the `malformed` signal). */
  readonly malformed: boolean;
  /** Extra `info` of the step, next to `proposal`. */
  readonly info?: Readonly<Record<string, unknown>>;
}

/** What a game's {@link ProposerExecutorGame.execute} returns. */
export interface Executed<S, T> {
  /** The turn record. */
  readonly record: T;
  /** Whether the answer could not be used (the `malformed` signal). */
  readonly malformed: boolean;
  /** The game's own fields of the next state (where things are now). */
  readonly next: Omit<S, Managed>;
  /** Whether the task is solved after it. */
  readonly success: boolean;
  /** Whether the episode ends although unsolved (e.g. a deadlock). Default false. */
  readonly stop?: boolean;
  /** The step's `info` (default: the record). */
  readonly info?: Readonly<Record<string, unknown>>;
}

/** What the seats are told about their part: one line per seat, and one for the executor alone. */
export interface SeatTexts {
  readonly proposer: string;
  readonly executor: string;
  readonly alone: string;
}

/** Any state of a proposer/executor game: the type a game's state type extends. */
export type AnyGameState = GameState<unknown, ProposalBase, TurnBase>;

/** The proposal record type of a game's state type. */
export type ProposalOf<S extends AnyGameState> = NonNullable<S['proposal']>;

/** The turn record type of a game's state type. */
export type TurnOf<S extends AnyGameState> = S['history'][number];

/**
 * A proposer/executor game for one resolved config (see the module comment). `S`: the state type, which names the
 * instance, proposal and turn record types; `A`: the action both seats produce; `C`: the config.
 */
export abstract class ProposerExecutorGame<S extends AnyGameState, A, C extends GameConfig> implements Environment<
  S['instance'],
  S,
  A
> {
  /** {@inheritDoc Environment.seats} */
  readonly seats: readonly SeatSpec[];
  /** {@inheritDoc Environment.actionTypes} */
  readonly actionTypes: readonly ActionTypeSpec[];
  /** {@inheritDoc Environment.maxTurns} */
  readonly maxTurns: number;
  /** The signals every step returns: `proposal_reward`, `executed_reward`, `success`, `malformed`. */
  readonly signals: readonly string[] = GAME_SIGNALS;

  /**
   * @param id the environment id (errors start with it)
   * @param config the resolved config
   * @param actionType the action type both seats produce
   * @param seatTexts the seats' descriptions: the proposer, the executor in the team, the executor alone
   */
  constructor(
    readonly id: string,
    readonly config: C,
    actionType: ActionTypeSpec,
    seatTexts: SeatTexts,
  ) {
    this.maxTurns = config.maxTurns;
    const alone = this.config.seats.length === 1;
    this.seats = deepFreeze(
      [
        { name: 'proposer', actionType: actionType.name, description: seatTexts.proposer },
        { name: 'executor', actionType: actionType.name, description: alone ? seatTexts.alone : seatTexts.executor },
      ].filter((s) => config.seats.includes(s.name as 'proposer')),
    );
    this.actionTypes = deepFreeze([actionType]);
  }

  /** {@inheritDoc Environment.instance} */
  abstract instance(split: Split, index: number, seed: number): S['instance'];
  /** The hash of the instance's content (`contentHash`); a game whose task is fixed by part of it hashes that part. */
  instanceKey(instance: S['instance']): string {
    return contentHash(instance);
  }

  /** The instance as JSON, with a picture and the oracle's solution, for `troupe env sample`. */
  abstract describe(instance: S['instance']): Record<string, unknown>;
  /** The initial state of an instance. */
  abstract reset(instance: S['instance']): S;
  /** The task statement for a seat. */
  abstract taskText(seat: string): string;
  /** The current state as text. */
  abstract stateText(state: S): string;
  /** The proposal as the executor is shown it. */
  abstract proposalText(proposal: ProposalOf<S>, state: S): string;
  /** One finished turn as a context block's text. */
  abstract historyText(record: TurnOf<S>, state: S): string;
  /** The game's `data` of an observation (the skeleton adds `proposal`). */
  protected abstract observationData(state: S): Record<string, unknown>;
  /** Simulates the proposer's move on a copy of the state. */
  protected abstract propose(state: S, move: Move<A>): Proposed<ProposalOf<S>>;
  /** Applies the executor's move. */
  protected abstract execute(state: S, move: Move<A>): Executed<S, TurnOf<S>>;
  /** The oracle's action for a seat (seat already checked). */
  protected abstract solve(state: S): A;
  /** A random action (seat already checked). */
  protected abstract random(state: S, rng: Rng): A;

  /** The initial state of `instance`: the game's `fields` and turn 0, the first seat, no proposal, no history. */
  protected start(instance: S['instance'], fields: Omit<S, Managed>, success = false): S {
    return deepFreeze({
      instance,
      ...fields,
      turn: 0,
      seatIndex: 0,
      proposal: null,
      history: [],
      success,
      done: false,
    } as unknown as S);
  }

  /** Whether the executor plays alone (`seats: ['executor']`). */
  get alone(): boolean {
    return this.seats.length === 1;
  }

  /** The seat's index in `seats`; throws on an unknown seat, naming the seats. */
  seatIndexOf(seat: string): number {
    const names = this.seats.map((s) => s.name);
    const i = names.indexOf(seat);
    if (i < 0) {
      throw new Error(
        `${this.id}: unknown seat "${seat}"; the seats are ${names.join(', ')}` +
          `${names.length < TEAM_SEATS.length ? ` (config.seats is ${JSON.stringify(SOLO_SEATS)}: the single-agent variant)` : ''}`,
      );
    }
    return i;
  }

  /** `You have at most T turns.` alone, the team's turn order otherwise. */
  turnsLine(): string {
    return this.alone
      ? `You have at most ${this.maxTurns} turns.`
      : `The team has at most ${this.maxTurns} turns; each turn the proposer speaks first, then the executor.`;
  }

  /** The duty line for `seat`: the solo text, the proposer's or the executor's. */
  duty(seat: string, texts: SeatTexts): string {
    return this.alone ? texts.alone : seat === 'proposer' ? texts.proposer : texts.executor;
  }

  /** `Turn t of T.`, the current turn (the last one once the episode is over). */
  turnLine(state: S): string {
    return `Turn ${Math.min(state.turn, this.maxTurns - 1) + 1} of ${this.maxTurns}.`;
  }

  /** {@inheritDoc Environment.observe} */
  observe(state: S, seat: string): Observation {
    this.seatIndexOf(seat);
    const context = state.history.map((t) => ({ label: `turn ${t.turn + 1}`, text: this.historyText(t, state) }));
    const shown = seat === 'executor' ? state.proposal : null;
    // The compact observation leaves the program out: the proposal line carries what it printed, and a byte-level
    // model would read a program of hundreds of characters before every answer.
    if (shown?.tool && this.config.observation !== 'compact')
      context.push({ label: 'proposer program', text: toolDetailsText(shown.tool) });
    if (shown) context.push({ label: 'proposal', text: this.proposalText(shown, state) });
    return deepFreeze({
      task: this.taskText(seat),
      state: this.stateText(state),
      context,
      turn: state.turn,
      data: { ...this.observationData(state), proposal: shown },
    });
  }

  /** {@inheritDoc Environment.step} */
  step(state: S, seat: string, move: Move<A>): StepResult<S> {
    const index = this.seatIndexOf(seat);
    if (state.done) throw new Error(`${this.id}: step called on a finished episode (seat ${seat}, turn ${state.turn})`);
    if (index !== state.seatIndex)
      throw new Error(
        `${this.id}: it is ${this.seats[state.seatIndex]?.name}'s move in turn ${state.turn}, not ${seat}'s`,
      );
    const malformed = (bad: boolean): number => (bad ? 1 : 0);
    if (seat === 'proposer') {
      const p = this.propose(state, move);
      const tool = toolDetailsOf(move.details);
      const proposal = (tool ? { ...p.proposal, tool } : p.proposal) as ProposalOf<S>;
      return deepFreeze({
        state: deepFreeze({ ...state, seatIndex: 1, proposal }),
        done: { terminated: false, truncated: false },
        success: false,
        signals: {
          proposal_reward: proposal.reward,
          executed_reward: 0,
          success: 0,
          malformed: malformed(p.malformed),
        },
        info: { proposal, ...p.info },
      });
    }
    const e = this.execute(state, move);
    const terminated = e.success || e.stop === true;
    const truncated = !terminated && state.turn + 1 >= this.maxTurns;
    const next = deepFreeze({
      instance: state.instance,
      ...e.next,
      turn: state.turn + 1,
      seatIndex: 0,
      proposal: null,
      history: [...state.history, e.record],
      success: e.success,
      done: terminated || truncated,
    } as unknown as S);
    return deepFreeze({
      state: next,
      done: { terminated, truncated },
      success: e.success,
      signals: {
        proposal_reward: 0,
        executed_reward: e.record.reward,
        success: e.success ? 1 : 0,
        malformed: malformed(e.malformed),
      },
      info: e.info ?? { ...(e.record as object) },
    });
  }

  /** The oracle's action for either seat. */
  oracle(state: S, seat: string): A {
    this.seatIndexOf(seat);
    return this.solve(state);
  }

  /** The oracle as a program (the coder's demonstrations); none unless the game overrides {@link oracleSource}. */
  oracleProgram(state: S, seat: string, language: ProgramLanguage): string | undefined {
    this.seatIndexOf(seat);
    return this.oracleSource(state, language);
  }

  /** The oracle program for the current state, or `undefined` where the game has none. */
  protected oracleSource(_state: S, _language: ProgramLanguage): string | undefined {
    return undefined;
  }

  /** {@inheritDoc Environment.randomAction} */
  randomAction(state: S, seat: string, rng: Rng): A {
    this.seatIndexOf(seat);
    return this.random(state, rng);
  }
}
