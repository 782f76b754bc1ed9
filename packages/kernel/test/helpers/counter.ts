/**
 * A tiny two-seat test environment (a shared counter to drive to a target), its role, reward, and fake policies.
 * Used only by the kernel's tests.
 */
import type {
  ChatMessage,
  Completion,
  Environment,
  GenerationRequest,
  Move,
  Observation,
  Policy,
  RewardFunction,
  Rng,
  Role,
  SeatContext,
  Split,
  StepResult,
} from '../../src/contracts/index.js';
import { contentHash, createRng, deriveSeed } from '../../src/util/index.js';

/** A counter instance: start value and target. */
export interface CounterInstance {
  readonly start: number;
  readonly target: number;
}

/** A counter state: current value, the moves made so far (seat, delta), and whether it is solved. */
export interface CounterState {
  readonly value: number;
  readonly target: number;
  readonly moves: readonly { readonly seat: string; readonly delta: number | null }[];
}

/** Options of the counter environment. */
export interface CounterOptions {
  readonly seats?: readonly string[];
  readonly maxTurns?: number;
  /** When true, `step` MUTATES the input state (a buggy environment, to test freezeStates). */
  readonly mutate?: boolean;
  /** When true, `step` is async (resolves on a later tick). */
  readonly async?: boolean;
}

/** The counter environment plus instrumentation (every step call is logged). */
export interface CounterEnv extends Environment<CounterInstance, CounterState, number> {
  /** Every step call: the state stepped, seat, move. */
  readonly steps: { state: CounterState; seat: string; move: Move<number> }[];
}

/**
 * Counter: each seat adds an integer delta in [-1, 2] to a shared value; solved when value === target.
 * Signals: `progress` = distance before − distance after; `invalid` = 1 for an unparsed move.
 */
export function counterEnv(options: CounterOptions = {}): CounterEnv {
  const seats = options.seats ?? ['a', 'b'];
  const steps: CounterEnv['steps'] = [];
  const doStep = (state: CounterState, seat: string, move: Move<number>): StepResult<CounterState> => {
    steps.push({ state, seat, move });
    const delta = move.kind === 'action' ? move.action : null;
    const value = state.value + (delta ?? 0);
    let next: CounterState;
    if (options.mutate) {
      (state as { value: number }).value = value;
      (state.moves as { seat: string; delta: number | null }[]).push({ seat, delta });
      next = state;
    } else {
      next = { value, target: state.target, moves: [...state.moves, { seat, delta }] };
    }
    const success = value === state.target;
    return {
      state: next,
      done: { terminated: success, truncated: false },
      success,
      signals: {
        progress: Math.abs(state.target - state.value) - Math.abs(state.target - value),
        invalid: delta === null ? 1 : 0,
      },
      info: { value },
    };
  };
  return {
    id: 'counter-v0',
    seats: seats.map((name) => ({ name, actionType: 'delta', description: `seat ${name}` })),
    actionTypes: [{ name: 'delta', schema: { type: 'integer', minimum: -1, maximum: 2 }, description: 'an increment' }],
    maxTurns: options.maxTurns ?? 4,
    steps,
    instance(split: Split, index: number, seed: number): CounterInstance {
      const rng = createRng(deriveSeed(seed, split, index));
      const start = rng.int(4);
      return { start, target: start + 3 + rng.int(4) };
    },
    instanceKey: (i) => contentHash(i),
    describe: (i) => ({ ...i }),
    reset: (i) => ({ value: i.start, target: i.target, moves: [] }),
    observe(state: CounterState, seat: string): Observation {
      return {
        task: `Drive the counter to ${state.target}.`,
        state: `value=${state.value}`,
        context: state.moves.map((m) => ({ label: m.seat, text: m.delta === null ? 'invalid' : String(m.delta) })),
        turn: Math.floor(state.moves.length / seats.length),
        data: { value: state.value, target: state.target, seat },
      };
    },
    step(state, seat, move) {
      if (options.async) return new Promise((resolve) => setImmediate(() => resolve(doStep(state, seat, move))));
      return doStep(state, seat, move);
    },
    oracle: (state: CounterState) => Math.max(-1, Math.min(2, state.target - state.value)),
    randomAction: (_state: CounterState, _seat: string, rng: Rng) => rng.int(4) - 1,
  };
}

/** The role: prompt shows the state and history; text `+N` / `-N` / `N` parses to an integer delta in [-1, 2]. */
export function counterRole(): Role<number> {
  return {
    id: 'counter-role-v0',
    produces: ['delta'],
    prompt(obs: Observation, seat: SeatContext): ChatMessage[] {
      const history = obs.context.map((c) => `${c.label}: ${c.text}`).join('\n');
      return [
        { role: 'system', content: `You are seat ${seat.seat}. ${obs.task}` },
        { role: 'user', content: `turn ${obs.turn}\n${obs.state}\n${history}` },
      ];
    },
    parse(text: string): Move<number> {
      const m = /^\s*([+-]?\d+)\s*$/.exec(text);
      if (!m) return { kind: 'invalid', error: `not an integer: ${JSON.stringify(text)}`, text };
      const d = Number(m[1]);
      if (d < -1 || d > 2) return { kind: 'invalid', error: `out of range: ${d}`, text };
      return { kind: 'action', action: d, text };
    },
    render: (a: number) => (a >= 0 ? `+${a}` : String(a)),
    grammar: () => ({ kind: 'regex', pattern: '[+-]?[0-2]' }),
  };
}

/** Reward: team = progress; penalty = −invalid. */
export function counterReward(): RewardFunction {
  return {
    id: 'counter-reward-v0',
    terms: (t) => ({ team: t.result.signals.progress!, penalty: t.result.signals.invalid === 1 ? -1 : 0 }),
  };
}

/** A completion with no tokens. */
export function completion(text: string): Completion {
  return { text, promptIds: [], tokenIds: [], logprobs: [], finishReason: 'stop' };
}

/** A fake policy answering each request with `texts(request, call)`; it records every request. */
export function listPolicy(
  name: string,
  texts: (request: GenerationRequest, call: number) => string[],
  extra: Partial<Policy> = {},
): Policy & { requests: GenerationRequest[] } {
  const requests: GenerationRequest[] = [];
  return {
    name,
    kind: 'fake',
    version: 3,
    requests,
    async generate(reqs) {
      return reqs.map((r) => {
        requests.push(r);
        return texts(r, requests.length - 1).map(completion);
      });
    },
    ...extra,
  };
}

/** A policy that never answers until its signal fires; records that it saw the abort. */
export function hangingPolicy(name: string): Policy & { calls: number; aborted: boolean; started: Promise<void> } {
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const p = {
    name,
    kind: 'hang',
    version: 0,
    calls: 0,
    aborted: false,
    started,
    generate(_reqs: readonly GenerationRequest[], options?: { signal?: AbortSignal }): Promise<Completion[][]> {
      p.calls++;
      markStarted();
      return new Promise((_resolve, reject) => {
        const signal = options?.signal;
        if (!signal) return reject(new Error('hangingPolicy: no abort signal was passed to generate'));
        signal.addEventListener(
          'abort',
          () => {
            p.aborted = true;
            reject(signal.reason);
          },
          { once: true },
        );
      });
    },
  };
  return p;
}
