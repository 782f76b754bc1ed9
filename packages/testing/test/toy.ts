/**
 * A tiny, correct environment / role / reward ("walk a counter to a target"), with switches that plant the bugs the
 * suites must catch.
 */
import type {
  Environment,
  EnvironmentContribution,
  Move,
  Observation,
  RewardContribution,
  Role,
  RoleContribution,
  Split,
  StepResult,
  Transition,
} from '@troupe/kernel';
import { contentHash, createRng, deriveSeed, splitOfContent } from '@troupe/kernel';
import { toolDetailsOf, toolDetailsText, type ToolDetails } from '@troupe/game-kit';

export interface ToyBugs {
  mutateState?: boolean;
  staleObservation?: boolean;
  ignoreSplit?: boolean;
  randomInstances?: boolean;
  neverDone?: boolean;
  nanSignal?: boolean;
  badOracle?: boolean;
  badRandomAction?: boolean;
  undeclaredActionType?: boolean;
  wrongSignals?: boolean;
  /** The oracle program prints the oracle's step plus one / raises / is never given. */
  programBug?: 'wrong' | 'crash' | 'missing';
}

export interface ToyInstance {
  readonly start: number;
  readonly target: number;
}
export interface ToyState {
  readonly instance: ToyInstance;
  n: number;
  turn: number;
}

export function toyEnvironment(bugs: ToyBugs = {}): EnvironmentContribution {
  const create = (): Environment<ToyInstance, ToyState, number> => ({
    id: 'toy-v0',
    seats: [
      { name: 'agent', actionType: bugs.undeclaredActionType ? 'missing' : 'step', description: 'moves the counter' },
    ],
    actionTypes: [
      { name: 'step', schema: { type: 'integer', minimum: -3, maximum: 3 }, description: 'how far to move' },
    ],
    maxTurns: 5,
    signals: bugs.wrongSignals ? ['distance', 'bonus'] : ['distance'],
    instance(split: Split, index: number, seed: number): ToyInstance {
      for (let attempt = 0; ; attempt++) {
        const rng = createRng(deriveSeed(seed, bugs.ignoreSplit ? 'any' : split, index, attempt));
        // With randomInstances both numbers come from Math.random, so two draws of one instance coincide with
        // probability 1/11,000 (a target alone coincided 1 time in 11 and let the determinism checks pass by chance).
        const draw = (n: number): number => (bugs.randomInstances ? Math.floor(Math.random() * n) : rng.int(n));
        const start = draw(1000);
        // Targets within 5 of the start, so the oracle (±3 per turn, 5 turns) always solves them.
        const inst = { start, target: start + draw(11) - 5 };
        if (bugs.ignoreSplit || splitOfContent(contentHash(inst)) === split) return inst;
      }
    },
    instanceKey: (i) => contentHash(i),
    describe: (i) => ({ ...i }),
    reset: (instance) => ({ instance, n: instance.start, turn: 0 }),
    observe(state): Observation {
      const n = bugs.staleObservation ? state.instance.start : state.n;
      return {
        task: `Reach ${state.instance.target}.`,
        state: `Counter: ${n}`,
        context: [],
        turn: bugs.staleObservation ? 0 : state.turn,
      };
    },
    step(state, _seat, move: Move<number>): StepResult<ToyState> {
      const delta = move.kind === 'action' ? move.action : 0;
      let next: ToyState;
      if (bugs.mutateState) {
        state.n += delta;
        state.turn += 1;
        next = state;
      } else {
        next = { instance: state.instance, n: state.n + delta, turn: state.turn + 1 };
      }
      const success = next.n === state.instance.target;
      const truncated = !bugs.neverDone && !success && next.turn >= 5;
      return {
        state: next,
        done: { terminated: bugs.neverDone ? false : success, truncated },
        success,
        signals: { distance: bugs.nanSignal ? Number.NaN : -Math.abs(next.n - state.instance.target) },
      };
    },
    oracle(state) {
      if (bugs.badOracle) return 0;
      return Math.max(-3, Math.min(3, state.instance.target - state.n));
    },
    randomAction: (_s, _seat, rng) => (bugs.badRandomAction ? 7 : rng.int(7) - 3),
    oracleProgram(state, _seat, language) {
      if (language !== 'python' || bugs.programBug === 'missing') return undefined;
      if (bugs.programBug === 'crash') return 'print(1 / 0)\n';
      return `t, n = ${state.instance.target}, ${state.n}\nprint(max(-3, min(3, t - n))${bugs.programBug === 'wrong' ? ' + 1' : ''})\n`;
    },
  });
  return {
    id: 'toy-v0',
    description: 'toy',
    configSchema: { type: 'object' },
    create,
  };
}

export interface RoleBugs {
  throwOnHash?: boolean;
  throwOnGarbage?: boolean;
  lossyRender?: boolean;
  randomPrompt?: boolean;
  acceptAnything?: boolean;
  hideState?: boolean;
  wrongGrammar?: boolean;
}

export function toyRole(bugs: RoleBugs = {}): RoleContribution {
  const role: Role<number> = {
    id: 'toy-role-v0',
    produces: ['step'],
    prompt: (o) => [
      { role: 'user', content: `${o.task}\n${bugs.hideState ? '' : o.state}${bugs.randomPrompt ? Math.random() : ''}` },
    ],
    parse(text) {
      if (bugs.throwOnHash && text.includes('#')) throw new Error('hash');
      const m = /^ANSWER (-?\d)$/.exec(text);
      if (bugs.throwOnGarbage && !m) throw new Error('boom');
      if (bugs.acceptAnything && !m) return { kind: 'action', action: 0, text };
      return m
        ? { kind: 'action', action: Number(m[1]), text }
        : { kind: 'invalid', error: 'expected "ANSWER <digit>"', text };
    },
    render: (a) => `ANSWER ${bugs.lossyRender ? Math.abs(a) : a}`,
    grammar: () => ({ kind: 'regex', pattern: bugs.wrongGrammar ? 'ANSWER \\d' : 'ANSWER -?\\d' }),
  };
  return {
    id: 'toy-role-v0',
    description: 'toy role',
    produces: ['step'],
    configSchema: { type: 'object' },
    create: () => role,
  };
}

export interface RewardBugs {
  missingTerm?: boolean;
  nan?: boolean;
  mutate?: boolean;
  extraTerm?: boolean;
}

export function toyReward(bugs: RewardBugs = {}): RewardContribution {
  return {
    id: 'toy-reward-v0',
    description: 'toy reward',
    terms: ['team', 'local'],
    configSchema: { type: 'object' },
    create: () => ({
      id: 'toy-reward-v0',
      terms(t: Transition) {
        if (bugs.mutate) (t as { turn: number }).turn += 1;
        const d = t.result.signals.distance ?? 0;
        const out: Record<string, number> = { team: bugs.nan ? Number.NaN : d, local: d };
        if (bugs.missingTerm) delete out.local;
        if (bugs.extraTerm) out.bonus = 1;
        return out;
      },
    }),
  };
}

/** Bugs the single-seat suite must catch in a two-seat game. */
export interface ToyGameBugs {
  acceptAnySeats?: boolean;
  proposalAlone?: boolean;
  otherInstancesAlone?: boolean;
  neverTruncate?: boolean;
  /** The executor never sees the proposer's program / sees it in the compact observation too. */
  hideProgram?: boolean;
  programInCompact?: boolean;
}
interface ToyGameState {
  readonly instance: ToyInstance;
  readonly n: number;
  readonly turn: number;
  readonly proposal: number | null;
  readonly done: boolean;
  readonly tool?: ToolDetails;
}

/**
 * A two-seat counter game in the shape of the game teams: the proposer's step is only simulated, the executor's is
 * applied, and `config.seats: ["executor"]` is the single-agent variant.
 */
export function toyGame(bugs: ToyGameBugs = {}): EnvironmentContribution {
  const team = ['proposer', 'executor'];
  const create = (config: Record<string, unknown>): Environment<ToyInstance, ToyGameState, number> => {
    const seats = config.seats ?? team;
    const known = JSON.stringify(seats) === JSON.stringify(team) || JSON.stringify(seats) === '["executor"]';
    if (!known && !bugs.acceptAnySeats)
      throw new Error(
        `toy-game-v0: environment.config.seats must be ["proposer", "executor"] or ["executor"], got ${JSON.stringify(seats)}`,
      );
    const names = known ? (seats as string[]) : team;
    const compact = config.observation === 'compact';
    const alone = names.length === 1;
    const seatCheck = (seat: string): void => {
      if (!names.includes(seat)) throw new Error(`toy-game-v0: unknown seat "${seat}"`);
    };
    return {
      id: 'toy-game-v0',
      seats: names.map((name) => ({ name, actionType: 'step', description: name })),
      actionTypes: [
        { name: 'step', schema: { type: 'integer', minimum: -3, maximum: 3 }, description: 'how far to move' },
      ],
      maxTurns: 3,
      signals: ['proposal_reward', 'executed_reward', 'success'],
      instance(split: Split, index: number, seed: number): ToyInstance {
        for (let attempt = 0; ; attempt++) {
          const rng = createRng(deriveSeed(bugs.otherInstancesAlone && alone ? seed + 1 : seed, split, index, attempt));
          const start = rng.int(1000);
          const inst = { start, target: start + rng.int(7) - 3 };
          if (splitOfContent(contentHash(inst)) === split) return inst;
        }
      },
      instanceKey: (i) => contentHash(i),
      describe: (i) => ({ ...i }),
      reset: (instance) => ({ instance, n: instance.start, turn: 0, proposal: null, done: false }),
      observe(state, seat): Observation {
        seatCheck(seat);
        const shown = seat === 'executor' && (state.proposal !== null || (alone && bugs.proposalAlone));
        return {
          task: alone
            ? 'Reach the target alone.'
            : 'Reach the target as a team: the proposer proposes, the executor moves.',
          state: `n=${state.n} target=${state.instance.target}`,
          context: [
            ...(shown && state.tool && !bugs.hideProgram && (!compact || bugs.programInCompact)
              ? [{ label: 'proposer program', text: toolDetailsText(state.tool) }]
              : []),
            ...(shown ? [{ label: 'proposal', text: String(state.proposal ?? 0) }] : []),
          ],
          turn: state.turn,
        };
      },
      step(state, seat, move: Move<number>): StepResult<ToyGameState> {
        seatCheck(seat);
        const delta = move.kind === 'action' ? move.action : 0;
        const target = state.instance.target;
        if (seat === 'proposer') {
          return {
            state: {
              ...state,
              proposal: delta,
              ...(toolDetailsOf(move.details) ? { tool: toolDetailsOf(move.details)! } : {}),
            },
            done: { terminated: false, truncated: false },
            success: false,
            signals: { proposal_reward: -Math.abs(state.n + delta - target), executed_reward: 0, success: 0 },
          };
        }
        const n = state.n + delta;
        const success = n === target;
        const truncated = !success && state.turn + 1 >= 3 && !bugs.neverTruncate;
        return {
          state: { instance: state.instance, n, turn: state.turn + 1, proposal: null, done: success || truncated },
          done: { terminated: success, truncated },
          success,
          signals: {
            proposal_reward: 0,
            executed_reward: success ? 1 : -Math.abs(n - target) / 10,
            success: success ? 1 : 0,
          },
        };
      },
      oracle: (state) => Math.max(-3, Math.min(3, state.instance.target - state.n)),
      randomAction: (_s, _seat, rng) => rng.int(7) - 3,
    };
  };
  return {
    id: 'toy-game-v0',
    description: 'toy two-seat game',
    configSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        seats: { type: 'array', items: { enum: team }, minItems: 1, maxItems: 2, uniqueItems: true, default: team },
        observation: { enum: ['full', 'compact'] },
      },
    },
    create,
  };
}
