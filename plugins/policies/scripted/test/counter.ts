/**
 * The game the scripted policies are tested on: two seats take turns adding -1, 0, +1 or +2 to one shared counter
 * until it reaches its target. Its oracle adds what is missing (at most +2); a move is written `+N` or `-1`.
 */
import type { Environment, Move, RewardFunction, Role } from '@troupe/kernel';

/** A counter game instance: where the counter starts and the value to reach. */
export interface CounterInstance {
  readonly start: number;
  readonly target: number;
}

/** The counter's value, its target, and the moves made so far. */
export interface CounterState {
  readonly value: number;
  readonly target: number;
  readonly moves: readonly { readonly seat: string; readonly delta: number | null }[];
}

export type CounterEnv = Environment<CounterInstance, CounterState, number>;

const LOWEST = -1;
const HIGHEST = 2;

/** The game, with seats `a` and `b`; instance `i` of a split starts at `i` and has its target 5 further. */
export function counterEnv(): CounterEnv {
  return {
    id: 'counter-v0',
    seats: ['a', 'b'].map((name) => ({ name, actionType: 'delta', description: `player ${name}` })),
    actionTypes: [
      { name: 'delta', schema: { type: 'integer', minimum: LOWEST, maximum: HIGHEST }, description: 'what to add' },
    ],
    maxTurns: 4,
    instance: (_split, index) => ({ start: index, target: index + 5 }),
    instanceKey: (instance) => `${instance.start}->${instance.target}`,
    describe: (instance) => ({ ...instance }),
    reset: (instance) => ({ value: instance.start, target: instance.target, moves: [] }),
    observe: (state, seat) => ({
      task: `Bring the counter to ${state.target}.`,
      state: `counter: ${state.value}`,
      context: state.moves.map((m) => ({ label: m.seat, text: m.delta === null ? '(no move)' : String(m.delta) })),
      turn: Math.floor(state.moves.length / 2),
      data: { seat },
    }),
    step(state, seat, move) {
      const delta = move.kind === 'action' ? move.action : null;
      const value = state.value + (delta ?? 0);
      const success = value === state.target;
      return {
        state: { value, target: state.target, moves: [...state.moves, { seat, delta }] },
        done: { terminated: success, truncated: false },
        success,
        signals: { closer: Math.abs(state.target - state.value) - Math.abs(state.target - value) },
      };
    },
    oracle: (state) => Math.min(HIGHEST, Math.max(LOWEST, state.target - state.value)),
    randomAction: (_state, _seat, rng) => LOWEST + rng.int(HIGHEST - LOWEST + 1),
  };
}

/** The role: the prompt shows the counter; `+N`, `-N` or `N` in range parses, anything else is an invalid move. */
export function counterRole(): Role<number> {
  return {
    id: 'counter-role-v0',
    produces: ['delta'],
    prompt: (obs) => [{ role: 'user', content: `${obs.task}\n${obs.state}` }],
    parse(text): Move<number> {
      const delta = /^\s*[+-]?\d+\s*$/.test(text) ? Number(text) : NaN;
      if (!(delta >= LOWEST && delta <= HIGHEST))
        return { kind: 'invalid', error: `not a move from ${LOWEST} to +${HIGHEST}: ${JSON.stringify(text)}`, text };
      return { kind: 'action', action: delta, text };
    },
    render: (delta) => (delta < 0 ? String(delta) : `+${delta}`),
  };
}

/** The team reward: how much closer to the target a move brought the counter. */
export function counterReward(): RewardFunction {
  return { id: 'counter-reward-v0', terms: (t) => ({ team: t.result.signals.closer ?? 0 }) };
}
