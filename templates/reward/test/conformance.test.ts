/**
 * The conformance suite every Troupe reward runs: every declared term present and finite on every sample
 * transition, deterministic, and the transition left untouched.
 */
import type { Transition } from '@troupe/kernel';
import { fileURLToPath } from 'node:url';
import { moduleConformance, rewardConformance } from '@troupe/testing';
import { SignalTermsContribution } from '../src/reward.js';

function transition(turn: number, signals: Record<string, number>, success: boolean): Transition {
  return {
    seat: 'walker',
    turn,
    before: { position: turn },
    move: { kind: 'action', action: ['R'], text: 'MOVES: R' },
    result: { state: { position: turn + 1 }, done: { terminated: success, truncated: false }, success, signals },
  };
}

const transitions = [
  transition(0, { executed_reward: -0.01, distance: 2 }, false),
  transition(1, { executed_reward: 0.99, distance: 0 }, true),
  transition(2, {}, false),
];

rewardConformance(new SignalTermsContribution(), { config: {}, transitions });
rewardConformance(new SignalTermsContribution(), {
  config: { team: 'distance', local: 'executed_reward', successBonus: 1 },
  transitions,
});

// The package as the kernel loads it: manifest, kernel range, and the module binding exactly what it declares.
moduleConformance(fileURLToPath(new URL('..', import.meta.url)), { fromSource: true });
