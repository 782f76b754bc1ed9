/**
 * A one-step bandit for the learning test: one seat states a move list (the planner's `#### [U]`), the same prompt
 * every time, reward 1 when the first move is the target and 0 otherwise. A policy that cannot read can still learn
 * it, so a trainer that does not raise its reward is broken, not the model too small.
 */
import {
  type Environment,
  type Move,
  EnvironmentContribution as EnvironmentPoint,
  ContainerModule,
} from '@troupe/kernel';

type Moves = readonly string[];
interface State {
  readonly index: number;
  readonly done: boolean;
}

export const BANDIT_ID = 'bandit-v0';

function bandit(target: string): Environment<{ index: number }, State, Moves> {
  return {
    id: BANDIT_ID,
    seats: [{ name: 'solver', actionType: 'moves', description: 'names one move' }],
    actionTypes: [
      {
        name: 'moves',
        schema: { type: 'array', items: { enum: ['U', 'D', 'L', 'R'] } },
        description: 'a list of moves',
      },
    ],
    maxTurns: 1,
    signals: ['hit'],
    instance: (_split, index) => ({ index }),
    instanceKey: (i) => String(i.index),
    describe: (i) => ({ index: i.index }),
    reset: (i) => ({ index: i.index, done: false }),
    observe: () => ({ task: 'Name a move.', state: 'move?', context: [], turn: 0 }),
    step: (state, _seat, move: Move<Moves>) => {
      const hit = move.kind === 'action' && move.action[0] === target ? 1 : 0;
      return {
        state: { ...state, done: true },
        done: { terminated: true, truncated: false },
        success: hit === 1,
        signals: { hit },
      };
    },
    randomAction: () => ['U'],
  };
}

/** The bandit as a kernel built-in module (`extraBuiltins` of `createHostFor`); `config.target` is the rewarded move. */
export const banditModule = {
  name: 'test bandit',
  module: new ContainerModule((bind) => {
    const contribution: EnvironmentPoint = {
      id: BANDIT_ID,
      description: 'one-step bandit: reward 1 for the target move',
      configSchema: { type: 'object', properties: { target: { enum: ['U', 'D', 'L', 'R'] } } },
      create: (config) => bandit(String(config.target ?? 'U')) as Environment,
    };
    bind(EnvironmentPoint).toConstantValue(contribution);
  }),
};
